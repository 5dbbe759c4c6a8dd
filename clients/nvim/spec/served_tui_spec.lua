-- The model that answers is the model shown (issue 40), as the user meets it: the editor
-- asks for gpt-4o from a local OpenAI-compatible server that answers as SmolLM2
-- (spec/smol_server.py, on 127.0.0.1). After a prompt typed and sent, the chat's winbar,
-- `/cost` typed in the prompt area and `:checkhealth elelem` name SmolLM2, not gpt-4o.
-- Driven through a real terminal (spec/tui.lua).
local H = require("spec.helpers")
local T = require("spec.tui")

local SERVED = "SmolLM2-135M-Instruct"
local IDLE = "return not require('elelem.session').current().busy"

-- counts the session/list answers the editor has read (an observer: the request goes on)
local LISTS = table.concat({
  "_G.lists = 0",
  "local daemon = require('elelem.daemon')",
  "local request = daemon.request",
  "daemon.request = function(method, params, cb)",
  "  if method ~= 'session/list' then return request(method, params, cb) end",
  "  return request(method, params, function(...) cb(...) _G.lists = _G.lists + 1 end)",
  "end",
}, " ") -- one line: spec/tui.lua writes `init` as one line of the editor's init file

describe("the model shown", function()
  local tui, server

  before_each(function()
    local port
    server = vim.system({ H.python, H.root .. "/spec/smol_server.py" }, {
      stdin = true,
      stdout = function(_, data)
        port = port or (data and data:match("(%d+)"))
      end,
    })
    H.wait(function()
      return port ~= nil
    end, "the local server's port")
    tui = T.start({
      file = "README.md",
      init = LISTS,
      setup = {
        provider = "openai",
        model = "gpt-4o",
        env = { OPENAI_BASE_URL = ("http://127.0.0.1:%s/v1"):format(port), OPENAI_API_KEY = "sk-local" },
      },
    })
  end)

  after_each(function()
    if tui then
      tui:stop()
      tui = nil
    end
    server:write(nil) -- its stdin closes: it stops
    server:wait(5000)
  end)

  it("the winbar and /cost name the model the server answers with", function()
    tui:command("Elelem", true) -- the prompt area, in insert mode
    tui:wait("return vim.b.elelem_prompt == true and vim.api.nvim_get_mode().mode == 'i'", "the prompt area")
    tui:type("hi there")
    tui:keys("C-s")
    tui:see("hello from the small model")
    tui:wait(IDLE, "the turn to end")
    tui:see("135M-Instruct · mode: build") -- the winbar, cut at its start in a narrow chat
    local bar = tui:lua("return vim.wo[vim.fn.bufwinid(require('elelem.session').current().chat:buffer())].winbar")
    assert.matches(SERVED, bar, 1, true)
    assert.is_nil(bar:find("gpt-4o", 1, true))
    local lists = tui:lua("return _G.lists")
    tui:type("/cost")
    tui:keys("C-s")
    tui:see("model: " .. SERVED .. " (served)")
    tui:wait(IDLE, "/cost to end")
    -- after a slash command the editor re-reads the session (session/list): still SmolLM2
    tui:wait(("return _G.lists > %d"):format(lists), "the session re-read")
    bar = tui:lua("return vim.wo[vim.fn.bufwinid(require('elelem.session').current().chat:buffer())].winbar")
    assert.matches(SERVED, bar, 1, true)
    tui:see("135M-Instruct · mode: build")
    assert.is_nil(tui:screen():find("gpt-4o · mode", 1, true))
    -- :checkhealth: its own probe's session cannot know yet; the open session's line does
    tui:command("checkhealth elelem", true)
    tui:see("an open session: provider openai, model " .. SERVED .. " (asked for gpt-4o)")
  end)
end)
