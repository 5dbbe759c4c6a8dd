-- Questions in the chat (issue 31): the permission question and the hunk decision are keys
-- in the chat buffer, without a modal; what the user types elsewhere never answers them.
-- Driven through a real terminal (spec/tui.lua).
local H = require("spec.helpers")
local T = require("spec.tui")

local PROMPT = [[
  local s = require("elelem.session").current()
  return { lines = vim.api.nvim_buf_get_lines(s:input(), 0, -1, false), mode = vim.api.nvim_get_mode().mode,
    in_prompt = vim.api.nvim_get_current_buf() == s:input() }
]]

describe("questions in the chat", function()
  local tui

  before_each(function()
    vim.fn.writefile({ "one", "two", "three" }, H.project .. "/small.txt")
    vim.fn.delete(H.project .. "/made.txt")
  end)

  after_each(function()
    if tui then
      tui:stop()
      tui = nil
    end
  end)

  it("a permission question waits in the chat while the user types and looks around (item 11)", function()
    tui = T.start({ file = "small.txt" })
    tui:command('Elelem !tool execute {"command":"echo hi > made.txt"}')
    tui:see("→ allow")
    tui:see("[question]")
    -- not modal: the user writes a draft, and moves in the file, while the question waits
    tui:keys("i")
    tui:type("yes, and also 1 2 q allow")
    local seen = tui:lua(PROMPT)
    assert.are.same({ "yes, and also 1 2 q allow" }, seen.lines)
    assert.are.equal("i", seen.mode)
    assert.are.equal(0, vim.fn.filereadable(H.project .. "/made.txt"))
    assert.is_true(tui:lua("return require('elelem.session').current().busy"))
    tui:shot(H.root .. "/screenshot-question.png")
    tui:keys("Escape")
    tui:command("ElelemAnswer") -- a picker of the answers, numbered
    tui:see("1: allow")
    tui:type("1")
    tui:keys("Enter")
    tui:see("? Allow")
    tui:wait("return not require('elelem.session').current().busy", "the turn to end")
    assert.are.equal(1, vim.fn.filereadable(H.project .. "/made.txt"))
    assert.matches("→ allow", table.concat(tui:lua("return require('elelem.session').current().chat:text()"), "\n"), 1, true)
    assert.are.same({ "yes, and also 1 2 q allow" }, tui:lua(PROMPT).lines)
    assert.is_nil(tui:screen():find("[question]", 1, true))
  end)

  it("no motion answers a question: <CR>, j, G, a search and a click only move (issue 40)", function()
    tui = T.start({ file = "small.txt" })
    tui:command('Elelem !tool execute {"command":"echo hi > made.txt"}')
    tui:see("1 → allow")
    tui:see("A in the chat") -- the chat line says how to answer
    tui:keys("C-w", "k")
    tui:wait("return vim.b.elelem_chat == true", "the chat")
    tui:keys("/")
    tui:keys("-l", "Allow execute")
    tui:keys("Enter") -- on the question, then <CR> down past every answer line to the end
    for _ = 1, 12 do
      tui:keys("Enter")
    end
    tui:keys("g", "g")
    for _ = 1, 40 do
      tui:keys("j")
    end
    tui:keys("G", "k", "k", "k")
    tui:keys("/")
    tui:keys("-l", "allow")
    tui:keys("Enter")
    tui:keys("Enter")
    -- a click on the answer line, as the mouse sends it (tmux cannot click)
    tui:lua([[
      local s = require("elelem.session").current()
      local buf = s.chat:buffer()
      for row, line in ipairs(vim.api.nvim_buf_get_lines(buf, 0, -1, false)) do
        if line:find("→ allow", 1, true) then
          local win = vim.fn.bufwinid(buf)
          local pos = vim.fn.screenpos(win, row, 5)
          vim.api.nvim_input_mouse("left", "press", "", 0, pos.row - 1, pos.col - 1)
          vim.api.nvim_input_mouse("left", "release", "", 0, pos.row - 1, pos.col - 1)
        end
      end
    ]])
    tui:keys("Enter")
    vim.wait(800)
    assert.are.equal(0, vim.fn.filereadable(H.project .. "/made.txt"))
    assert.is_true(tui:lua("return require('elelem.session').current().busy"))
    assert.is_true(tui:lua("return #require('elelem.chatask').open == 1"))
    -- the explicit answer: A in the chat, a number in the picker
    tui:keys("A")
    tui:see("2: deny")
    tui:type("2")
    tui:keys("Enter")
    tui:wait("return not require('elelem.session').current().busy", "the turn to end")
    assert.are.equal(0, vim.fn.filereadable(H.project .. "/made.txt"))
  end)

  it("a hunk is decided by ga on its lines in the chat", function()
    tui = T.start({ file = "small.txt" })
    tui:command('Elelem !tool edit {"path":"small.txt","old":"two","new":"TWO"}')
    tui:see("hunk 1 [pending]")
    -- ga in the prompt area is text
    tui:keys("i")
    tui:type("ga gr gA")
    tui:keys("Escape")
    assert.are.same({ "one", "two", "three" }, vim.fn.readfile(H.project .. "/small.txt"))
    -- the user moves into the chat (<C-w>k from the prompt area) and onto the hunk
    tui:keys("C-w", "k")
    tui:wait("return vim.b.elelem_chat == true", "the chat")
    tui:keys("/")
    tui:keys("-l", "^+TWO")
    tui:keys("Enter")
    tui:keys("g", "a")
    tui:see("review of small.txt → accepted")
    tui:wait("return not require('elelem.session').current().busy", "the turn to end")
    assert.are.same({ "one", "TWO", "three" }, vim.fn.readfile(H.project .. "/small.txt"))
    assert.are.same({ "ga gr gA" }, tui:lua(PROMPT).lines)
  end)

  it("a question without options is answered with :ElelemAnswer, the draft left alone", function()
    tui = T.start({ file = "small.txt" })
    tui:command('Elelem !tool interview {"question":"Which name?"}')
    tui:see(":ElelemAnswer {your answer}")
    tui:keys("i")
    tui:type("not the answer")
    tui:keys("Escape")
    tui:command("ElelemAnswer total")
    tui:see("? Which name? → total")
    tui:wait("return not require('elelem.session').current().busy", "the turn to end")
    assert.are.same({ "not the answer" }, tui:lua(PROMPT).lines)
  end)
end)
