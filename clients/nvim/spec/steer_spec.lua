-- Steering (issue 20) against the real daemon: a prompt sent while a turn runs is a
-- session/steer the turn takes into its next request (the stub answers a user message
-- right after a tool result with "steered: TEXT. done."); not_running sends it as a turn;
-- any other refusal says why and keeps the text.
local H = require("spec.helpers")

describe("steering", function()
  teardown(H.shutdown)

  local ui_input = vim.ui.input
  local answer -- the held answer of the running interview tool

  before_each(function()
    H.setup()
    H.reset()
    answer = nil
    vim.ui.input = function(_, done)
      answer = done
    end
  end)

  after_each(function()
    vim.ui.input = ui_input
  end)

  --- Starts a turn whose tool waits for the user's answer (held in `answer`).
  local function hold()
    vim.cmd('Elelem !tool interview {"question":"go on?"}')
    H.wait(function()
      return answer ~= nil
    end, "the interview question")
  end

  --- Records the answers of daemon requests of `method` while the spec runs.
  local function answers(method)
    local daemon = require("elelem.daemon")
    local got, request = {}, daemon.request
    daemon.request = function(m, params, cb)
      return request(m, params, function(err, result)
        if m == method then
          table.insert(got, { err = err, result = result, params = params })
        end
        if cb then
          cb(err, result)
        end
      end)
    end
    return got, function()
      daemon.request = request
    end
  end

  it("sends a prompt typed while a turn runs as a steer, shown in the chat", function()
    hold()
    local s = H.session()
    local got, stop = answers("session/steer")
    vim.api.nvim_set_current_win(require("elelem.layout").find(s:input()))
    vim.api.nvim_buf_set_lines(s:input(), 0, -1, false, { "also look at b.py" })
    vim.cmd.stopinsert()
    vim.api.nvim_feedkeys(vim.keycode("<CR>"), "x", false)
    assert.are.same({ "" }, vim.api.nvim_buf_get_lines(s:input(), 0, -1, false)) -- taken
    H.wait(function()
      return #got == 1
    end, "the steer's answer")
    stop()
    assert.are.same({ queued = true }, got[1].result)
    assert.are.same({ sessionId = s.id, text = "also look at b.py" }, got[1].params)
    answer("yes")
    H.idle()
    local text = H.text()
    assert.matches("↪ steer %(queued%): also look at b%.py\n", text)
    assert.matches("\n↪ steered: also look at b%.py\n", text)
    assert.matches("steered: also look at b%.py%. done%.$", text)
    local _, prompts = text:gsub("## You", "")
    assert.are.equal(1, prompts) -- one turn: the steer went into it
    assert.are.equal(0, #H.notified("a turn is running"))
    -- the conversation keeps prompt, steer, reply
    local messages
    require("elelem.daemon").request("session/context", { sessionId = s.id }, function(_, result)
      messages = result.messages
    end)
    H.wait(function()
      return messages ~= nil
    end, "session/context")
    assert.are.same({ "user", "user", "assistant" }, vim.tbl_map(function(m)
      return m.role
    end, vim.list_slice(messages, 2)))
    assert.are.equal("also look at b.py", messages[3].content)
  end)

  it("sends it as a turn when the daemon answers not_running", function()
    H.turn("!echo first")
    local s = H.session()
    local got, stop = answers("session/steer")
    s.busy = true -- the client still thinks a turn runs: it has ended on the daemon
    vim.cmd("Elelem !echo after all")
    s.busy = false -- its answer comes in before the steer's
    H.wait(function()
      return #got == 1
    end, "the steer's answer")
    stop()
    assert.are.equal(-32006, got[1].err.code)
    assert.are.equal("not_running", got[1].err.data.kind)
    H.wait(function()
      return H.text():find("\nafter all$") ~= nil
    end, "the prompt sent as a turn")
    H.idle()
    assert.matches("↪ steer %(queued%): !echo after all\n%(no turn was running: sent as a prompt%)\n\n## You\n\n"
      .. "    !echo after all\n\n## elelem\n", H.text())
  end)

  it("holds a prompt sent while a command runs (not_running) and sends it once the command answers", function()
    H.turn("!echo first")
    local select, decide = vim.ui.select, nil
    vim.ui.select = function(_, _, done)
      decide = done
    end
    local got, stop = answers("session/steer")
    vim.cmd("Elelem /undo") -- its confirm question keeps the command running
    H.wait(function()
      return decide ~= nil
    end, "the confirm question")
    vim.cmd("Elelem !echo after the command")
    H.wait(function()
      return #got == 1
    end, "the steer's answer")
    stop()
    assert.are.equal("not_running", got[1].err.data.kind)
    assert.is_nil(H.text():find("## You\n\n    !echo after the command", 1, true)) -- held, not refused
    decide("no")
    H.wait(function()
      return H.text():find("\nafter the command$") ~= nil
    end, "the held prompt's turn")
    vim.ui.select = select
    H.idle()
    assert.matches("## /undo\n.*%(no turn was running: sent as a prompt%)\n\n## You\n\n    !echo after the command\n",
      H.text())
    assert.are.equal(0, #H.notified("a turn is running"))
  end)

  it("says why a steer is refused and keeps the text in the prompt area", function()
    hold()
    local s = H.session()
    local long = ("x"):rep(70000) -- past the daemon's 65536 characters
    assert.is_true(s:send(long))
    H.wait(function()
      return H.text():find("steer not sent", 1, true) ~= nil
    end, "the refusal")
    assert.matches("steer not sent: .*%(invalid_params%)", H.text())
    assert.matches("%(your text is back in the prompt area%)", H.text())
    assert.are.same({ long }, vim.api.nvim_buf_get_lines(s:input(), 0, -1, false))
    assert.are.equal(1, #H.notified("steer not sent"))
    -- a steer carries no attachments: refused at once, kept
    vim.api.nvim_buf_set_lines(s:input(), 0, -1, false, {})
    assert.is_false(s:send("look at #buffer"))
    assert.are.equal(1, #H.notified("takes no #buffer"))
    assert.are.same({ "look at #buffer" }, vim.api.nvim_buf_get_lines(s:input(), 0, -1, false))
    answer("yes")
    H.idle()
    assert.matches("\ndone%.$", H.text()) -- the turn went on as if nothing was sent
  end)

  it("marks a steer the turn never took as not sent and puts its text back in the prompt area", function()
    hold()
    local s = H.session()
    vim.api.nvim_buf_set_lines(s:input(), 0, -1, false, {}) -- an empty prompt area
    local got, stop = answers("session/steer")
    assert.is_true(s:send("also look at b.py"))
    assert.is_true(s:send("and c.py"))
    H.wait(function()
      return #got == 2
    end, "the steers' answers")
    stop()
    s:cancel() -- the turn ends before another request: the daemon says neither was sent
    H.idle()
    local text = H.text()
    assert.matches("\n↪ steer not sent %(the turn ended first%): also look at b%.py\n", text)
    assert.matches("\n↪ steer not sent %(the turn ended first%): and c%.py\n", text)
    assert.is_nil(text:find("\nsteer not sent (the turn ended first)", 1, true)) -- said once, marked
    assert.is_nil(text:find("↪ steered:", 1, true))
    assert.are.same({ "also look at b.py", "", "and c.py" }, vim.api.nvim_buf_get_lines(s:input(), 0, -1, false))
    local _, told = text:gsub("%(your steer is back in the prompt area%)", "")
    assert.are.equal(1, told) -- once for the turn
  end)

  it("keeps a draft in the prompt area and puts a steer not sent after it", function()
    hold()
    local s = H.session()
    local got, stop = answers("session/steer")
    assert.is_true(s:send("also look at b.py"))
    H.wait(function()
      return #got == 1
    end, "the steer's answer")
    stop()
    vim.api.nvim_buf_set_lines(s:input(), 0, -1, false, { "a draft" })
    s:cancel()
    H.idle()
    assert.are.same({ "a draft", "", "also look at b.py" }, vim.api.nvim_buf_get_lines(s:input(), 0, -1, false))
  end)
end)
