-- An attachment never breaks the window (issue 40), as the user meets it: an @-mention of
-- a 6,000-line file typed in the prompt area, with the suite's 1,000-token window, is cut
-- to its share and the chat says so ("cut to fit … lines 1–N of 6,000"); a mention outside
-- the project says that nothing was attached. Driven through a real terminal (spec/tui.lua).
local H = require("spec.helpers")
local T = require("spec.tui")

local IDLE = "return not require('elelem.session').current().busy"

--- Types `text` in the prompt area (insert mode), closes any completion menu, sends it.
local function send(tui, text)
  tui:type(text)
  tui:wait("return vim.api.nvim_get_mode().mode == 'i'", "insert mode")
  if tui:lua("return vim.fn.pumvisible()") == 1 then
    tui:keys("C-e")
  end
  tui:keys("C-s")
  tui:wait(IDLE .. " and #require('elelem.session').current().turns == 1", text .. " to end")
end

describe("an @-mention in the prompt area", function()
  local tui

  before_each(function()
    local lines = {}
    for n = 1, 6000 do
      lines[n] = ("line %d of the big file"):format(n)
    end
    vim.fn.writefile(lines, H.project .. "/big.txt")
    vim.fn.writefile({ "not in the project" }, H.tmp .. "/outside.txt")
  end)

  after_each(function()
    if tui then
      tui:stop()
      tui = nil
    end
  end)

  it("of a file larger than its share is cut, and the chat says where", function()
    tui = T.start({ file = "README.md" })
    tui:command("Elelem", true) -- the prompt area, in insert mode
    tui:wait("return vim.b.elelem_prompt == true and vim.api.nvim_get_mode().mode == 'i'", "the prompt area")
    send(tui, "!echo explain @big.txt ")
    tui:see("@big.txt was cut to fit") -- the rest wraps in the narrow chat: read from the buffer
    local text = table.concat(tui:lua("return require('elelem.session').current().chat:text()"), "\n")
    local kept = text:match("@big%.txt was cut to fit the model's window: lines 1–(%d+) of 6,000")
    assert.is_not_nil(kept, text)
    assert.is_true(tonumber(kept) < 6000)
    assert.is_nil(text:find("compacted", 1, true)) -- cut before any compaction, none after
  end)

  it("outside the project says that nothing was attached", function()
    tui = T.start({ file = "README.md" })
    tui:command("Elelem", true)
    tui:wait("return vim.b.elelem_prompt == true and vim.api.nvim_get_mode().mode == 'i'", "the prompt area")
    send(tui, "!echo compare @../outside.txt ")
    tui:see("@../outside.txt attaches nothing") -- the rest wraps in the narrow chat
    local text = table.concat(tui:lua("return require('elelem.session').current().chat:text()"), "\n")
    assert.matches("@../outside.txt attaches nothing: it is outside the working directory", text, 1, true)
    assert.is_nil(tui:screen():find("not in the project", 1, true))
  end)
end)
