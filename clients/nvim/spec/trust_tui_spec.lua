-- The trust question lists what the folder would load (issue 29): the daemon's `trust.loads`
-- (plugin files, rules, skills, MCP servers with their commands masked), shown in the chat
-- before the user answers; "trust this folder" loads it (`session/trust`), "not now" does not.
-- Driven through a real terminal (spec/tui.lua).
local H = require("spec.helpers")
local T = require("spec.tui")

local CHAT = "return table.concat(require('elelem.session').current().chat:text(), '\\n')"
local COMMANDS = [[
  return vim.tbl_map(function(c) return c.name end, require("elelem.session").current():commands())
]]

--- A folder with a plugin (a `/hello` command), a rule, a skill and an MCP server.
local function folder(name)
  local dir = H.tmp .. "/" .. name
  vim.fn.mkdir(dir .. "/.agents/plugins", "p")
  vim.fn.mkdir(dir .. "/.agents/skills/deploy", "p")
  vim.fn.writefile({
    "def register(plugin):",
    "    @plugin.command('hello', 'Say hello')",
    "    def hello(session, args):",
    "        session.output.say('hello from the project')",
  }, dir .. "/.agents/plugins/hello.py")
  vim.fn.writefile({ "execute allow" }, dir .. "/.agents/permissions")
  vim.fn.writefile({ "---", "name: deploy", "description: Deploy it", "---", "Deploy." },
    dir .. "/.agents/skills/deploy/SKILL.md")
  vim.fn.writefile({ vim.json.encode({ mcpServers = { tools = {
    command = "elelem-no-such-server", args = { "--api-key", "sekrit-value-123" } } } }) }, dir .. "/.mcp.json")
  return vim.uv.fs_realpath(dir)
end

describe("the trust question", function()
  local tui

  after_each(function()
    if tui then
      tui:stop()
      tui = nil
    end
  end)

  it("lists what the folder would load before the answer; trusting it loads the plugin", function()
    local dir = folder("trusted-ui")
    tui = T.start({ setup = { cwd = dir } })
    tui:command("Elelem /hello")
    tui:see("→ trust this folder")
    local chat = tui:lua(CHAT)
    assert.matches("Trust " .. dir .. "? Trusting it loads:", chat, 1, true)
    assert.matches("plugin (Python code that runs in the session): .agents/plugins/hello.py", chat, 1, true)
    assert.matches("permission rule (.agents/permissions): execute allow", chat, 1, true)
    assert.matches("skill (.agents/skills, instructions the model follows): deploy", chat, 1, true)
    assert.matches("elelem-no-such-server --api-key ***", chat, 1, true)
    assert.is_nil(chat:find("sekrit", 1, true))
    -- nothing loaded while the question waits, and the command waits with it
    assert.is_false(vim.tbl_contains(tui:lua(COMMANDS), "hello"))
    assert.is_nil(chat:find("hello from the project", 1, true))
    tui:command("ElelemAnswer trust")
    tui:wait(CHAT .. ":find('hello from the project', 1, true) ~= nil", "the project's /hello")
    assert.is_true(vim.tbl_contains(tui:lua(COMMANDS), "hello"))
    -- remembered in vim.secure: a new session is trusted without a word
    tui:command("ElelemNew")
    tui:command("Elelem /hello")
    tui:wait(CHAT .. ":find('hello from the project', 1, true) ~= nil", "/hello in the new session")
    assert.is_nil(tui:lua(CHAT):find("Trusting it loads", 1, true))
  end)

  it("not now: the folder's plugin stays unloaded", function()
    local dir = folder("untrusted-ui")
    tui = T.start({ setup = { cwd = dir } })
    tui:command("Elelem /hello")
    tui:see("→ not now")
    assert.matches(".agents/plugins/hello.py", tui:lua(CHAT), 1, true)
    tui:command("ElelemAnswer not")
    tui:wait(CHAT .. ":find('stays untrusted', 1, true) ~= nil", "the answer")
    tui:wait("return not require('elelem.session').current().busy", "/hello to end")
    assert.is_false(vim.tbl_contains(tui:lua(COMMANDS), "hello"))
    assert.is_nil(tui:lua(CHAT):find("hello from the project", 1, true))
  end)
end)
