-- A turn in the chat buffer: streaming in order, thinking, tool call lines, slash commands,
-- the prompt area and completion. Real headless Neovim, real daemon, stub provider.
local H = require("spec.helpers")

describe("the chat", function()
  teardown(H.shutdown)

  before_each(function()
    H.setup()
    H.reset()
  end)

  it("streams a turn into the buffer in order while the turn runs", function()
    vim.cmd("Elelem !stream 100 20")
    local s = H.session()
    H.wait(function()
      return H.text():find("tok2 ", 1, true) ~= nil
    end, "the first deltas")
    -- seen mid-turn: the turn is still running and the end has not arrived yet
    assert.is_true(s.busy)
    assert.is_nil(H.text():find("tok99", 1, true))
    H.idle()
    local expected = {}
    for i = 0, 99 do
      table.insert(expected, ("tok%d "):format(i))
    end
    local lines = H.lines()
    assert.are.same({ "## You", "", "    !stream 100 20", "", "## elelem", "considering the request" },
      vim.list_slice(lines, 1, 6))
    assert.are.equal(table.concat(expected), lines[7])
    assert.are.equal("markdown", vim.bo[s.chat:buffer()].filetype)
  end)

  it("dims the thinking and lets it fold", function()
    H.turn("!echo hello there")
    local s = H.session()
    local buf = s.chat:buffer()
    local row = vim.fn.index(H.lines(), "considering the request")
    assert.is_true(row >= 0)
    local ns = vim.api.nvim_get_namespaces()["elelem.thinking"]
    local marks = vim.api.nvim_buf_get_extmarks(buf, ns, { row, 0 }, { row, -1 }, { details = true, overlap = true })
    assert.are.equal(1, #marks)
    assert.are.equal("ElelemThinking", marks[1][4].hl_group)
    local win = require("elelem.layout").find(buf)
    local got = vim.api.nvim_win_call(win, function()
      local levels = { vim.fn.foldlevel(row + 1), vim.fn.foldlevel(row + 2) }
      vim.cmd((row + 1) .. "foldclose")
      return { levels = levels, closed = vim.fn.foldclosed(row + 1), text = vim.fn.foldtextresult(row + 1) }
    end)
    assert.are.same({ 1, 0 }, got.levels) -- the thinking line folds, the reply does not
    assert.are.equal(row + 1, got.closed)
    assert.matches("thinking %(1 line%): considering the request", got.text)
    assert.are.equal("hello there", H.lines()[row + 2])
  end)

  it("shows a tool call and its result as one compact line", function()
    H.turn('!tool read {"path":"README.md"}')
    local text = H.text()
    assert.matches('\n%+ read%({"path":"README.md"}%) ✓\n', text)
    assert.matches("\n\nconsidering the request\ndone.$", text)
    H.turn("!tool read {}")
    assert.matches("\n%+ read%({}%) ✗ object at root is missing required properties: path\n", H.text())
    H.turn("!tool nosuch {}")
    assert.matches('\n%+ nosuch%?%({}%) ✗ unknown tool: "nosuch"', H.text())
  end)

  it("shows the diff a write or edit result carries, once", function()
    local c = require("elelem.chat").new("diffs")
    c:user("write it")
    c:doing({ id = "1", name = "write", arguments = { path = "a.txt" } })
    c:result({ id = "1", name = "write", ok = true, result = { diff = "--- a.txt\n+++ a.txt\n+hi\n", ok = true } })
    c:doing({ id = "2", name = "edit", arguments = { path = "a.txt" } })
    c:diff("-hi\n+ho") -- previewed when permission was asked
    c:result({ id = "2", name = "edit", ok = true, result = { diff = "-hi\n+ho", ok = true } })
    assert.are.same({ '+ write({"path":"a.txt"}) ✓', "```diff", "--- a.txt", "+++ a.txt", "+hi", "```",
      '+ edit({"path":"a.txt"}) ✓', "```diff", "-hi", "+ho", "```" }, vim.list_slice(c:text(), 6))
    vim.api.nvim_buf_delete(c:buffer(), { force = true })
  end)

  it("sends / lines as session commands and shows their output", function()
    H.turn("/help")
    local lines = H.lines()
    assert.are.equal("## /help", lines[1])
    assert.are.equal("```text", lines[3])
    assert.is_true(vim.tbl_contains(lines, "```"))
    assert.matches("/context", H.text())
    H.turn("/nosuch")
    assert.matches("## /nosuch", H.text())
    assert.matches("help", H.text():match("## /nosuch(.*)$"))
  end)

  it("completes command names from the session", function()
    H.turn("!echo hi")
    assert.are.same({ "/help" }, vim.fn.getcompletion("Elelem /he", "cmdline"))
    assert.is_true(vim.tbl_contains(vim.fn.getcompletion("Elelem /", "cmdline"), "/context"))
    assert.are.same({}, vim.fn.getcompletion("Elelem hello /he", "cmdline"))
    local prompt = H.session():input()
    vim.api.nvim_set_current_buf(prompt)
    vim.api.nvim_buf_set_lines(prompt, 0, -1, false, { "/co" })
    vim.api.nvim_win_set_cursor(0, { 1, 3 })
    local input = require("elelem.input")
    assert.are.equal(0, input.omnifunc(1, ""))
    local words = vim.tbl_map(function(item)
      return item.word
    end, input.omnifunc(0, "/co"))
    assert.are.same({ "/compact", "/context", "/cost" }, words)
    vim.api.nvim_buf_set_lines(prompt, 0, -1, false, { "say /co" })
    vim.api.nvim_win_set_cursor(0, { 1, 7 })
    assert.are.equal(-3, input.omnifunc(1, ""))
  end)

  it("completes a command's argument and file names from the daemon", function()
    assert.is_nil(H.session().id) -- the first <Tab> may come before any prompt
    local got
    require("elelem.input").arguments(H.session():input(), "/context j", function(start, items)
      got = { start = start, items = items }
    end)
    H.wait(function()
      return got ~= nil
    end, "session/complete")
    assert.are.same({ start = 10, items = { "json" } }, got)
    got = nil
    require("elelem.input").arguments(H.session():input(), "look at REA", function(start, items)
      got = { start = start, items = items }
    end)
    H.wait(function()
      return got ~= nil
    end, "session/complete")
    assert.are.same({ start = 9, items = { "README.md" } }, got)
  end)

  it("closes the chat on /exit", function()
    vim.cmd("Elelem !echo hi")
    H.idle()
    local s = H.session()
    local old = s.id
    vim.cmd("Elelem /exit")
    H.wait(function()
      return s.id ~= old
    end, "the session to end")
    assert.is_nil(require("elelem.layout").find(s.chat:buffer()))
    assert.is_false(s.busy)
  end)

  it("sends the prompt area with <CR> and empties it", function()
    vim.cmd("Elelem")
    local s = H.session()
    assert.are.equal(s:input(), vim.api.nvim_get_current_buf())
    vim.api.nvim_buf_set_lines(0, 0, -1, false, { "!echo from the prompt area" })
    vim.cmd.stopinsert()
    vim.api.nvim_feedkeys(vim.keycode("<CR>"), "x", false)
    H.idle()
    assert.are.same({ "" }, vim.api.nvim_buf_get_lines(s:input(), 0, -1, false))
    assert.matches("\nfrom the prompt area$", H.text())
  end)

  -- (a prompt sent while a turn runs is a steer: steer_spec.lua)
  it("refuses a /command while a turn runs, with a message", function()
    vim.cmd("Elelem !stream 100 20")
    vim.cmd("Elelem /help")
    assert.are.equal(1, #H.notified("a turn is running"))
    H.session():cancel()
    H.idle()
    assert.is_nil(H.text():find("## /help", 1, true))
  end)

  it("keeps a /command typed while a turn runs in the prompt area", function()
    vim.cmd("Elelem !stream 100 20")
    local s = H.session()
    vim.api.nvim_set_current_win(require("elelem.layout").find(s:input()))
    vim.api.nvim_buf_set_lines(s:input(), 0, -1, false, { "/help" })
    vim.cmd.stopinsert()
    vim.api.nvim_feedkeys(vim.keycode("<CR>"), "x", false)
    assert.are.equal(1, #H.notified("a turn is running"))
    assert.are.same({ "/help" }, vim.api.nvim_buf_get_lines(s:input(), 0, -1, false))
    s:cancel()
    H.idle()
    -- sent again once the turn is over, it goes
    vim.api.nvim_feedkeys(vim.keycode("<CR>"), "x", false)
    H.idle()
    assert.are.same({ "" }, vim.api.nvim_buf_get_lines(s:input(), 0, -1, false))
    assert.matches("\n## /help\n", H.text())
  end)

  it("puts a refused :Elelem /command in an empty prompt area", function()
    vim.cmd("Elelem !stream 100 20")
    vim.cmd("Elelem /help typed on the command line")
    local s = H.session()
    assert.are.same({ "/help typed on the command line" }, vim.api.nvim_buf_get_lines(s:input(), 0, -1, false))
    vim.api.nvim_buf_set_lines(s:input(), 0, -1, false, { "a draft" })
    vim.cmd("Elelem /help another")
    assert.are.same({ "a draft" }, vim.api.nvim_buf_get_lines(s:input(), 0, -1, false)) -- a draft is not replaced
    s:cancel()
    H.idle()
  end)

  it("gives back a prompt the daemon refuses as session_busy", function()
    H.turn("!echo hi")
    local s = H.session()
    local done = false
    -- a turn the chat does not know about (as another client of the session would run)
    require("elelem.daemon").request("session/turn", { sessionId = s.id, text = "!stream 100 20" }, function()
      done = true
    end)
    H.wait(function()
      return H.text():find("tok1 ", 1, true) ~= nil
    end, "the other turn to stream")
    vim.api.nvim_buf_set_lines(s:input(), 0, -1, false, { "!echo refused by the daemon" })
    vim.api.nvim_set_current_win(require("elelem.layout").find(s:input()))
    vim.cmd.stopinsert()
    vim.api.nvim_feedkeys(vim.keycode("<CR>"), "x", false)
    H.idle()
    assert.matches("session_busy", H.text())
    assert.are.same({ "!echo refused by the daemon" }, vim.api.nvim_buf_get_lines(s:input(), 0, -1, false))
    require("elelem.daemon").notify("session/cancel", { sessionId = s.id })
    H.wait(function()
      return done
    end, "the other turn to end")
  end)

  it("runs one session per tab, at the same time", function()
    vim.cmd("Elelem !stream 40 10")
    local first = H.session()
    vim.cmd("tabnew")
    vim.cmd("Elelem !stream 30 10")
    local second = H.session()
    assert.is_not.equal(first, second)
    assert.is_true(first.busy and second.busy)
    H.wait(function()
      return not first.busy and not second.busy
    end, "both turns")
    assert.are_not.equal(first.id, second.id)
    local a, b = table.concat(first.chat:text(), "\n"), table.concat(second.chat:text(), "\n")
    assert.matches("tok39 \n", a .. "\n")
    assert.matches("tok29 \n", b .. "\n")
    assert.is_nil(a:find("!stream 30", 1, true))
    assert.is_nil(b:find("!stream 40", 1, true))
    vim.cmd("tabclose")
    H.wait(function()
      return require("elelem.session").sessions[second.tab] == nil
    end, "the closed tab's session to go")
    assert.is_false(vim.api.nvim_buf_is_valid(second.chat.buf))
  end)

  it("shows a provider failure once: its error event, not again as the Error: reply", function()
    local seen, stop = H.record()
    H.turn("!fail the model is down")
    stop()
    local said = vim.tbl_filter(function(event)
      return event.method == "event/say"
    end, seen)
    assert.are.same({ "the model is down", "error" }, { said[1].params.text, said[1].params.kind })
    local lines = H.lines()
    assert.are.same({ "## elelem", "considering the request", "error: the model is down" }, vim.list_slice(lines, 5))
    local _, count = H.text():gsub("the model is down", "")
    assert.are.equal(2, count) -- the prompt, and the error once
    local buf = H.session().chat:buffer()
    local ns = vim.api.nvim_get_namespaces()["elelem.chat"]
    local marks = vim.api.nvim_buf_get_extmarks(buf, ns, { #lines - 1, 0 }, { #lines - 1, -1 }, { details = true })
    assert.are.equal("ElelemError", marks[1][4].hl_group)
    local summary = vim.tbl_filter(function(mark)
      return mark[4].virt_text ~= nil
    end, vim.api.nvim_buf_get_extmarks(buf, ns, { 4, 0 }, { 4, -1 }, { details = true }))
    assert.are.equal("## elelem", lines[5])
    assert.are.equal("  error", summary[1][4].virt_text[1][1])
    H.turn("!echo still working")
    assert.matches("\nstill working$", H.text())
  end)

  it("shows the turn's tokens, the cache's share and the context meter beside the heading", function()
    H.turn('!events [{"type": "saying", "text": "ok"}, '
      .. '{"type": "usage", "input_tokens": 12, "output_tokens": 3, "cache_read_tokens": 8}]')
    local lines = H.lines()
    local buf = H.session().chat:buffer()
    local ns = vim.api.nvim_get_namespaces()["elelem.chat"]
    local heading = #lines - 1 -- the 0-based row of the last "## elelem"
    while lines[heading + 1] ~= "## elelem" do
      heading = heading - 1
    end
    local summary = vim.tbl_filter(function(mark)
      return mark[4].virt_text ~= nil
    end, vim.api.nvim_buf_get_extmarks(buf, ns, { heading, 0 }, { heading, -1 }, { details = true }))
    assert.are.equal("  end_turn · 12 in (8 cached) · 3 out · 15/1.0k ctx (1%)", summary[1][4].virt_text[1][1])
  end)

  it("shows an Error: reply that no error event said", function()
    local c = require("elelem.chat").new("errors")
    c:user("hi")
    c:say({ text = "something else went wrong", kind = "error" })
    c:finish({ stopReason = "error", reply = "Error: the model is down" })
    assert.are.same({ "error: something else went wrong", "Error: the model is down" }, vim.list_slice(c:text(), 6))
    vim.api.nvim_buf_delete(c:buffer(), { force = true })
  end)

  it("reports an unknown provider in the chat", function()
    H.setup({ provider = "nosuch" })
    H.turn("!echo hi")
    assert.matches("error: .*nosuch.*unknown_provider", H.text())
    assert.is_nil(H.session().id)
  end)
end)
