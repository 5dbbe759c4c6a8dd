-- Focus is the user's (issue 31): keys typed at a normal pace go where the user is typing,
-- whatever the agent opens meanwhile. Driven through a real terminal (spec/tui.lua).
local H = require("spec.helpers")
local T = require("spec.tui")

local CALC = {
  '"""A tiny calculator."""',
  "",
  "",
  "def add(a: int, b: int) -> int:",
  "    return a + b",
  "",
  "",
  "def div(a: int, b: int) -> float:",
  "    return a / b",
}

--- The prompt area's lines, the current buffer's kind and the mode.
local PROMPT = [[
  local s = require("elelem.session").current()
  local buf = vim.api.nvim_get_current_buf()
  return { lines = vim.api.nvim_buf_get_lines(s:input(), 0, -1, false), in_prompt = buf == s:input(),
    mode = vim.api.nvim_get_mode().mode, wins = #vim.api.nvim_tabpage_list_wins(0) }
]]

describe("focus is the user's", function()
  local tui
  local calc = H.project .. "/calc.py"

  before_each(function()
    vim.fn.writefile(CALC, calc)
  end)

  after_each(function()
    if tui then
      tui:stop()
      tui = nil
    end
  end)

  it("typing while a review opens decides nothing: the text stays in the prompt (item 1)", function()
    tui = T.start({ file = "calc.py" })
    local edit = { type = "doing", id = "e1", name = "edit", arguments = {
      path = "calc.py", old = "    return a / b\n", new = "    if b == 0:\n        raise ZeroDivisionError\n    return a / b\n" } }
    -- the agent says something, pauses, then edits calc.py: a review opens while the user types
    tui:command("Elelem !events " .. vim.json.encode({ { type = "saying", text = "working on it" }, 1200, edit }))
    tui:see("working on it")
    tui:keys("i")
    tui:type("please look at the div ")
    tui:wait("return #require('elelem.review').open == 1", "the review to open")
    local sentence = "please look at the div function, check the progress and then try it again, quickly"
    tui:type(sentence:sub(#"please look at the div " + 1))
    vim.wait(300)
    local seen = tui:lua(PROMPT)
    assert.are.same({ sentence }, seen.lines)
    assert.is_true(seen.in_prompt)
    assert.are.equal("i", seen.mode)
    -- nothing decided: the review waits, every hunk pending, the file untouched
    local pending = tui:lua([[
      local r = require("elelem.review").open[1]
      return { open = r ~= nil, decided = r and vim.tbl_count(r.decided) or -1,
        win = r and r.win and vim.api.nvim_win_is_valid(r.win) or false }
    ]])
    assert.are.same({ open = true, decided = 0, win = true }, pending)
    assert.are.same(CALC, vim.fn.readfile(calc))
    assert.are.same(CALC, tui:lua("return vim.api.nvim_buf_get_lines(vim.fn.bufnr(...), 0, -1, false)", calc))
    -- it said so: a notification, a line in the chat, the statusline
    local notes = table.concat(tui:lua("return _G.notes"), "\n")
    assert.matches(":ElelemReview", notes, 1, true)
    tui:see("[review]")
    tui:see("▶ review of calc.py")
    tui:shot(H.root .. "/screenshot-review.png")
    -- the user goes there deliberately and decides; the prompt keeps its draft
    tui:keys("Escape")
    tui:command("ElelemReview")
    tui:wait("return vim.b.elelem_review == true", "the cursor in the review")
    tui:keys("g", "a")
    tui:see("review of calc.py → accepted")
    tui:wait("return not require('elelem.session').current().busy", "the turn to end")
    assert.are.equal("    if b == 0:", vim.fn.readfile(calc)[9])
    assert.are.same({ sentence }, tui:lua(PROMPT).lines)
    assert.is_nil(tui:screen():find("[review]", 1, true))
  end)

  it("typing in a file buffer while a review opens: the keys stay in the file (item 1)", function()
    vim.fn.writefile({ "x = 1" }, H.project .. "/other.py")
    tui = T.start({ file = "calc.py" })
    local edit = { type = "doing", id = "e1", name = "edit", arguments = { path = "other.py", old = "x = 1", new = "x = 2" } }
    tui:command("Elelem !events " .. vim.json.encode({ { type = "saying", text = "working on it" }, 800, edit }))
    tui:see("working on it")
    tui:lua("vim.api.nvim_set_current_win(vim.fn.bufwinid(vim.fn.bufnr(...)))", calc)
    tui:keys("G", "o")
    tui:type("# go ")
    tui:wait("return #require('elelem.review').open == 1", "the review to open")
    tui:type("again, quickly: gr gA q")
    tui:keys("Escape")
    local now = tui:lua("return { lines = vim.api.nvim_buf_get_lines(0, 0, -1, false), name = vim.api.nvim_buf_get_name(0) }")
    assert.are.equal(calc, now.name)
    assert.are.equal("# go again, quickly: gr gA q", now.lines[#now.lines])
    assert.are.equal(0, tui:lua("return vim.tbl_count(require('elelem.review').open[1].decided)"))
    assert.are.same({ "x = 1" }, vim.fn.readfile(H.project .. "/other.py"))
  end)

  it("q in a review only hides it; :ElelemReview shows it again", function()
    tui = T.start({ file = "calc.py" })
    tui:command('Elelem !tool edit {"path":"calc.py","old":"a + b","new":"b + a"}')
    tui:wait("return #require('elelem.review').open == 1", "the review to open")
    tui:command("ElelemReview")
    tui:wait("return vim.b.elelem_review == true", "the cursor in the review")
    tui:keys("q")
    tui:wait("local r = require('elelem.review').open[1] return r ~= nil and r.win == nil", "the review hidden")
    assert.are.same(CALC, vim.fn.readfile(calc))
    tui:command("ElelemReview")
    tui:wait("return vim.b.elelem_review == true", "the review shown again")
    tui:keys("g", "r")
    tui:see("review of calc.py → rejected")
    assert.are.same(CALC, vim.fn.readfile(calc))
  end)

  it("<C-s> leaves the prompt area in the mode the user was in (item 4)", function()
    tui = T.start({ file = "calc.py" })
    tui:command("Elelem")
    tui:wait("return vim.b.elelem_prompt == true and vim.api.nvim_get_mode().mode == 'i'", "the prompt area, insert mode")
    tui:type("!echo first")
    tui:keys("C-s")
    tui:see("first")
    -- the next words are text, not commands: no `q` closing the chat, no `u` in calc.py, no `!` filter
    tui:type("quickly undo !that")
    vim.wait(300)
    local seen = tui:lua(PROMPT)
    assert.are.same({ "quickly undo !that" }, seen.lines)
    assert.is_true(seen.in_prompt)
    assert.are.equal("i", seen.mode)
    assert.are.equal(3, seen.wins) -- calc.py, the chat, the prompt area
    assert.are.same(CALC, tui:lua("return vim.api.nvim_buf_get_lines(vim.fn.bufnr(...), 0, -1, false)", calc))
    -- from normal mode it stays in normal mode
    tui:keys("C-s")
    tui:see("quickly undo !that")
    tui:wait("return vim.api.nvim_get_mode().mode == 'i'", "insert mode still")
    tui:keys("Escape")
    tui:wait("return vim.api.nvim_get_mode().mode == 'n'", "normal mode")
    tui:wait("return not require('elelem.session').current().busy", "the turn to end")
    tui:keys("i")
    tui:type("!echo second")
    tui:keys("Escape", "C-s")
    tui:see("second")
    vim.wait(200)
    assert.are.equal("n", tui:mode())
  end)
  it("<C-c> cancels from insert mode after <C-s>, as the winbar says (issue 40)", function()
    tui = T.start({ file = "calc.py" })
    tui:command("Elelem")
    tui:wait("return vim.b.elelem_prompt == true and vim.api.nvim_get_mode().mode == 'i'", "the prompt area, insert mode")
    tui:type("!stream 1000 50")
    tui:keys("C-s")
    tui:wait("return require('elelem.session').current().busy", "the turn to run")
    tui:see("<C-c> cancel")
    tui:type("next ")
    tui:keys("C-c")
    tui:wait("return not require('elelem.session').current().busy", "the turn cancelled")
    tui:see("cancelled")
    local seen = tui:lua(PROMPT)
    assert.are.equal("i", seen.mode) -- still typing: the draft goes on
    assert.are.same({ "next " }, seen.lines)
    -- with no turn running, <C-c> leaves insert mode as everywhere
    tui:keys("C-c")
    tui:wait("return vim.api.nvim_get_mode().mode == 'n'", "normal mode")
    assert.are.same(CALC, tui:lua("return vim.api.nvim_buf_get_lines(vim.fn.bufnr(...), 0, -1, false)", calc))
  end)

  it("no single key closes the chat: q is Vim's own there; :ElelemClose closes it (issue 40)", function()
    tui = T.start({ file = "calc.py" })
    tui:command("Elelem !echo hello")
    tui:see("hello")
    tui:lua("vim.fn.win_gotoid(vim.fn.bufwinid(require('elelem.session').current().chat:buffer()))")
    tui:wait("return vim.b.elelem_chat == true and vim.api.nvim_get_mode().mode == 'n'", "the chat")
    tui:keys("q") -- Vim's macro recording, as in any buffer: nothing closes
    tui:keys("q")
    tui:type("x")
    vim.wait(300)
    assert.are.equal(3, tui:lua(PROMPT).wins)
    assert.is_true(tui:lua("return vim.b.elelem_chat == true")) -- the keys stayed in the chat
    assert.are.same(CALC, tui:lua("return vim.api.nvim_buf_get_lines(vim.fn.bufnr(...), 0, -1, false)", calc))
    tui:command("ElelemClose")
    tui:wait("return #vim.api.nvim_tabpage_list_wins(0) == 1", "the chat closed")
    assert.are.same(CALC, tui:lua("return vim.api.nvim_buf_get_lines(vim.fn.bufnr(...), 0, -1, false)", calc))
  end)
end)
