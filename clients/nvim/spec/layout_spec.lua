-- The shape the issue asks for: plugin/ only defines commands, and nothing on the UI path
-- waits (vim.wait only in checkhealth and in the VimLeavePre shutdown).
local H = require("spec.helpers")

local function read(path)
  return table.concat(vim.fn.readfile(H.root .. "/" .. path), "\n")
end

describe("the plugin's shape", function()
  it("plugin/elelem.lua only defines user commands, loading nothing", function()
    local source = read("plugin/elelem.lua")
    local _, commands = source:gsub("command%(\"Elelem%w*\"", "")
    assert.are.equal(19, commands)
    -- `require` only inside the command callbacks, through the one helper
    local outside = source:gsub("local function elelem%(%)\n  return require%(\"elelem\"%)\nend", "")
    assert.is_nil(outside:find("require", 1, true))
    -- in a fresh Neovim: the commands exist and no elelem module is loaded
    local probe = "lua io.stdout:write(vim.json.encode({ commands = vim.fn.exists(':ElelemSelection'),"
      .. " loaded = package.loaded.elelem ~= nil }))"
    local result = vim.system({ vim.v.progpath, "--headless", "-u", "NONE", "-i", "NONE", "--cmd",
      "set rtp^=" .. H.root, "-c", "runtime plugin/elelem.lua", "-c", probe, "-c", "qa!" }, { text = true }):wait(30000)
    assert.are.same({ commands = 2, loaded = false }, vim.json.decode(result.stdout))
  end)

  it("waits only in checkhealth and on VimLeavePre", function()
    local waits = {}
    for _, file in ipairs(vim.fn.globpath(H.root .. "/lua/elelem", "*.lua", false, true)) do
      local name = vim.fn.fnamemodify(file, ":t")
      for _ in table.concat(vim.fn.readfile(file), "\n"):gmatch("vim%.wait%(") do
        waits[name] = (waits[name] or 0) + 1
      end
    end
    assert.are.same({ ["daemon.lua"] = 2, ["health.lua"] = 2 }, waits)
    local daemon = read("lua/elelem/daemon.lua")
    local shutdown = daemon:match("function M%.shutdown.-\nend\n")
    local _, in_shutdown = shutdown:gsub("vim%.wait%(", "")
    assert.are.equal(2, in_shutdown)
  end)
end)
