-- The chat under real hands (issue 31, items 7, 8, 11): it follows what is written, comes
-- back to the end when the user sends, shows a long paragraph's end, a pending attachment,
-- and a statusline that is current. Driven through a real terminal (spec/tui.lua).
local H = require("spec.helpers")
local T = require("spec.tui")

local IDLE = "return not require('elelem.session').current().busy"

describe("the chat under real hands", function()
  local tui

  before_each(function()
    vim.fn.writefile({ "local M = {}", "function M.add(a, b)", "  return a + b", "end", "return M" },
      H.project .. "/calc.lua")
  end)

  after_each(function()
    if tui then
      tui:stop()
      tui = nil
    end
  end)

  it("sending brings the chat back to its end; :ElelemResume opens at the end (item 7)", function()
    tui = T.start({ file = "calc.lua" })
    local many = {}
    for i = 1, 80 do
      many[i] = "line " .. i .. " of a long answer"
    end
    tui:command("Elelem !events " .. vim.json.encode({ { type = "saying", text = table.concat(many, "\n\n") } }))
    tui:wait(IDLE, "the turn")
    tui:see("line 80 of a long answer")
    -- the user reads from the top of the chat, then goes back to the prompt area
    tui:keys("C-w", "k")
    tui:wait("return vim.b.elelem_chat == true", "the chat")
    tui:keys("g", "g")
    tui:wait("return vim.api.nvim_win_get_cursor(0)[1] == 1", "the top of the chat")
    tui:keys("C-w", "j")
    tui:wait("return vim.b.elelem_prompt == true", "the prompt area")
    tui:keys("i")
    tui:type("!echo marker-two")
    tui:keys("C-s")
    tui:wait(IDLE, "the second turn")
    tui:see("marker-two")
    -- a fresh tab session, then the stored one again: at its end
    tui:keys("Escape")
    tui:command("ElelemNew")
    tui:command("ElelemResume")
    tui:see("(resumed:")
    tui:see("marker-two")
  end)

  it("a paragraph taller than the window shows its end (item 11)", function()
    tui = T.start({ file = "calc.lua" })
    local words = {}
    for i = 1, 400 do
      words[i] = "word" .. i
    end
    tui:command("Elelem !echo " .. table.concat(words, " ") .. " THE-END")
    tui:wait(IDLE, "the turn")
    tui:see("THE-END")
  end)

  it("a pending :ElelemAdd attachment is in view above the prompt (item 8)", function()
    tui = T.start({ file = "calc.lua" })
    tui:command("2,3ElelemAdd")
    tui:command("Elelem")
    tui:see("attached: selection calc.lua:2-3")
  end)

  it("the statusline is current once a turn ends, after a conflict too (item 11)", function()
    tui = T.start({ file = "calc.lua" })
    tui:command("Elelem " .. '!tool edit {"path":"calc.lua","old":"a + b","new":"b + a"}')
    tui:wait("return #require('elelem.review').open == 1", "the review")
    tui:see("elelem:build …")
    -- the user edits the file meanwhile, then accepts: a conflict, nothing applied
    tui:lua("vim.api.nvim_set_current_win(vim.fn.bufwinid(vim.fn.bufnr(...)))", H.project .. "/calc.lua")
    tui:keys("G", "o")
    tui:type("-- mine")
    tui:keys("Escape")
    tui:command("ElelemAccept")
    tui:wait(IDLE, "the turn")
    tui:see("conflict")
    tui:see("elelem:build")
    vim.wait(300)
    assert.is_nil(tui:screen():find("elelem:build …", 1, true), tui:screen())
  end)
end)
