-- :checkhealth elelem against the real daemon, and against a command that is not there.
local H = require("spec.helpers")

local function checkhealth()
  vim.cmd("checkhealth elelem")
  local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
  vim.cmd("bwipeout!")
  return text
end

describe(":checkhealth elelem", function()
  teardown(H.shutdown)

  before_each(function()
    H.setup()
    H.reset()
  end)

  it("reports the daemon starting, its version and its providers", function()
    local text = checkhealth()
    assert.matches("OK Neovim 0%.11", text)
    assert.matches("OK daemon starts: elelem 0%.1%.0 %(.*elelem_daemon%)", text)
    assert.matches("providers: [^\n]*stub", text)
    assert.matches("OK a session opens: provider stub, model stub, %d+ tools, %d+ commands", text)
    assert.is_nil(text:find("ERROR", 1, true))
  end)

  it("reports a daemon command that is not executable", function()
    H.setup({ cmd = { "/nonexistent/elelem", "daemon" } })
    local text = checkhealth()
    assert.matches("ERROR `/nonexistent/elelem` is not executable", text)
  end)

  it("reports a provider that does not exist", function()
    H.setup({ provider = "nosuch" })
    local text = checkhealth()
    assert.matches("OK daemon starts", text)
    assert.matches("ERROR a session does not open: .*nosuch", text)
  end)
end)
