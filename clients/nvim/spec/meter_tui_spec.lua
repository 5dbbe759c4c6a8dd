-- The context meter and the model picker (issue 40), as the user meets them: the meter in
-- the chat's winbar, always in view, warning before auto-compaction; `:ElelemModel` lists
-- what the daemon reports and switches by the number typed. Driven through a real
-- terminal (spec/tui.lua); the stub reports usage through `!events`, and the suite's
-- ELELEM_CONTEXT_WINDOW gives it a 1,000-token window.
local H = require("spec.helpers")
local T = require("spec.tui")

local function usage(input, read)
  return ('Elelem !events [{"type":"usage","input_tokens":%d,"output_tokens":10,"cache_read_tokens":%d},'
    .. '{"type":"saying","text":"counted"}]'):format(input, read)
end

describe("the meter and the model picker", function()
  local tui

  after_each(function()
    if tui then
      tui:stop()
      tui = nil
    end
  end)

  it("the winbar shows the context, the cache and a warning before auto-compaction", function()
    tui = T.start({ file = "README.md" })
    tui:command(usage(290, 200), true)
    tui:see("30% · 68% cached")
    assert.is_nil(tui:screen():find("auto-compacts", 1, true)) -- far from it
    tui:wait("return not require('elelem.session').current().busy", "the turn to end")
    tui:command(usage(780, 700), true)
    tui:see("79% · 89% cached · ⚠ auto-compacts at 85%") -- the end of the winbar: in view
    local bar = tui:lua("return vim.wo[vim.fn.bufwinid(require('elelem.session').current().chat:buffer())].winbar")
    assert.matches("ctx 790/1%.0k 79%%", bar)
    assert.matches("elelem:build 79%%!", tui:screen())
    tui:shot(H.root .. "/screenshot-meter.png")
  end)

  it(":ElelemModel lists the providers and switches to the one picked", function()
    tui = T.start({ file = "README.md" })
    tui:command("Elelem !echo ready", true)
    tui:see("ready")
    tui:wait("return not require('elelem.session').current().busy", "the turn to end")
    tui:command("ElelemModel", true)
    tui:see("elelem model (now stub · stub)")
    tui:shot(H.root .. "/screenshot-model.png")
    local screen = tui:screen()
    local number = screen:match("(%d+): provider stub %(current%)")
    assert.is_not_nil(number, screen)
    tui:type(number)
    tui:keys("Enter")
    tui:see("switched to stub")
  end)
end)
