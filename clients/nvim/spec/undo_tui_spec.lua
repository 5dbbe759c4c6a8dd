-- Undo restores what the user sees (issue 31): the disk and the buffer lose the agent's
-- change, the user's own unsaved edit stays, and the chat still shows the kept turn as it
-- was (its tool calls, their diff, the plan). Driven through a real terminal (spec/tui.lua).
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

local BUFFER = [[
  local buf = vim.fn.bufnr(...)
  return { lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false), modified = vim.bo[buf].modified }
]]

describe("undo under real hands", function()
  local tui
  local calc = H.project .. "/calc.py"

  after_each(function()
    if tui then
      tui:stop()
      tui = nil
    end
  end)

  it(":ElelemUndo: disk as before the turn, the user's unsaved edit kept, the kept turn drawn whole (items 2, 5)", function()
    vim.fn.writefile(CALC, calc)
    local before = table.concat(CALC, "\n") .. "\n"
    tui = T.start({ file = "calc.py" })
    -- turn 1: a plan and a read; kept by the undo
    tui:command("Elelem !tools " .. vim.json.encode({
      { "todo", { todos = { { content = "read calc.py", status = "completed" }, { content = "guard div", status = "pending" } } } },
      { "read", { path = "calc.py" } } }))
    tui:wait("return not require('elelem.session').current().busy", "turn 1")
    -- turn 2: the agent's edit, reviewed and accepted by the user
    tui:command("Elelem " .. '!tool edit {"path":"calc.py","old":"    return a / b\\n","new":"    if b == 0:\\n        raise ZeroDivisionError\\n    return a / b\\n"}')
    tui:wait("return #require('elelem.review').open == 1", "the review")
    tui:command("ElelemReview")
    tui:wait("return vim.b.elelem_review == true", "the cursor in the review")
    tui:keys("g", "a")
    tui:wait("return not require('elelem.session').current().busy", "turn 2")
    assert.are.equal("    if b == 0:", vim.fn.readfile(calc)[9])
    -- the user's own edit in calc.py, not saved
    tui:lua("vim.api.nvim_set_current_win(vim.fn.bufwinid(vim.fn.bufnr(...)))", calc)
    tui:keys("g", "g", "A")
    tui:type(" Mine.")
    tui:keys("Escape")
    assert.are.same('"""A tiny calculator.""" Mine.', tui:lua(BUFFER, calc).lines[1])
    -- undo, answering the built-in question as a user does
    tui:command("ElelemUndo")
    tui:see("Go on?")
    tui:see("unsaved changes kept")
    tui:type("1")
    tui:keys("Enter")
    tui:see("rewound to before turn 2")
    -- the disk is byte-identical to before turn 2; the buffer: that, plus the user's edit
    local fd = assert(io.open(calc, "rb"))
    local disk = fd:read("*a")
    fd:close()
    assert.are.equal(before, disk)
    local wanted = vim.deepcopy(CALC)
    wanted[1] = wanted[1] .. " Mine."
    tui:wait(("return vim.deep_equal(vim.api.nvim_buf_get_lines(vim.fn.bufnr(%q), 0, -1, false), vim.json.decode(%q))")
      :format(calc, vim.json.encode(wanted)), "the buffer: restored, the user's edit kept")
    assert.is_true(tui:lua(BUFFER, calc).modified)
    -- the chat shows turn 1 as it was: the plan, the tool calls and their marks; turn 2 is gone
    local chat = table.concat(tui:lua("return require('elelem.session').current().chat:text()"), "\n")
    assert.matches("Plan:", chat, 1, true)
    assert.matches("[x] read calc.py", chat, 1, true)
    assert.matches('+ read({"path":"calc.py"}) ✓', chat, 1, true)
    assert.matches("+ todo(", chat, 1, true)
    assert.is_nil(chat:find("+ edit(", 1, true))
    assert.matches("your unsaved edits kept", chat, 1, true)
    tui:shot(H.root .. "/screenshot-undo.png")
    -- `u` in calc.py takes the user's edit back too: one undo step on top of the reload
    tui:lua("vim.api.nvim_set_current_win(vim.fn.bufwinid(vim.fn.bufnr(...)))", calc)
    tui:keys("u")
    tui:wait(("return vim.api.nvim_buf_get_lines(vim.fn.bufnr(%q), 0, 1, false)[1] == %q"):format(calc, CALC[1]),
      "u undoes the merge")
  end)

  it("a clash between the user's edit and the undone change is asked once, the lines named", function()
    local clash = H.project .. "/clash.txt"
    vim.fn.writefile({ "one", "two", "three" }, clash)
    tui = T.start({ file = "clash.txt" })
    tui:command('Elelem !tool edit {"path":"clash.txt","old":"two","new":"TWO"}')
    tui:wait("return #require('elelem.review').open == 1", "the review")
    tui:command("ElelemAccept")
    tui:wait("return not require('elelem.session').current().busy", "the turn")
    assert.are.same({ "one", "TWO", "three" }, vim.fn.readfile(clash))
    tui:lua("vim.api.nvim_set_current_win(vim.fn.bufwinid(vim.fn.bufnr(...)))", clash)
    tui:keys("j", "A")
    tui:type(" and mine")
    tui:keys("Escape")
    tui:command("ElelemUndo")
    tui:see("Go on?")
    tui:type("1")
    tui:keys("Enter")
    tui:see("both touch line 2")
    tui:type("1") -- keep my lines there
    tui:keys("Enter")
    tui:see("kept as you typed them")
    assert.are.same({ "one", "two", "three" }, vim.fn.readfile(clash))
    assert.are.same({ "one", "TWO and mine", "three" }, tui:lua(BUFFER, clash).lines)
  end)

  it("an accepted change that only reached the buffer (it had unsaved edits) is taken out of it", function()
    vim.fn.writefile(CALC, calc)
    local before = table.concat(CALC, "\n") .. "\n"
    tui = T.start({ file = "calc.py" })
    tui:keys("g", "g", "A")
    tui:type(" Mine.")
    tui:keys("Escape")
    tui:command("Elelem " .. '!tool edit {"path":"calc.py","old":"a + b","new":"b + a"}')
    tui:wait("return #require('elelem.review').open == 1", "the review")
    tui:command("ElelemAccept")
    tui:wait("return not require('elelem.session').current().busy", "the turn")
    local now = tui:lua(BUFFER, calc)
    assert.are.equal("    return b + a", now.lines[5])
    assert.is_true(now.modified)
    tui:command("ElelemUndo")
    tui:see("Go on?")
    tui:type("1")
    tui:keys("Enter")
    tui:see("rewound to before turn 1")
    local wanted = vim.deepcopy(CALC)
    wanted[1] = wanted[1] .. " Mine."
    tui:wait(("return vim.deep_equal(vim.api.nvim_buf_get_lines(vim.fn.bufnr(%q), 0, -1, false), vim.json.decode(%q))")
      :format(calc, vim.json.encode(wanted)), "the agent's change out of the buffer, the user's edit kept")
    local fd = assert(io.open(calc, "rb"))
    assert.are.equal(before, fd:read("*a"))
    fd:close()
  end)
end)
