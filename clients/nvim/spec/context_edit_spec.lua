-- Context editing (issue 20) against the real daemon: `/context edit N` and
-- `:ElelemContext edit N` open message N in a buffer; `:w` sends session/editContext
-- (an empty buffer deletes it); refusals are said and the buffer keeps the text.
local H = require("spec.helpers")

describe("context editing", function()
  teardown(H.shutdown)

  local ui_input = vim.ui.input

  before_each(function()
    H.setup()
    H.reset()
  end)

  after_each(function()
    vim.ui.input = ui_input
    for _, b in ipairs(vim.api.nvim_list_bufs()) do -- a modified one would stop later specs' :edit
      if vim.api.nvim_buf_get_name(b):match("^elelem://context/") then
        vim.api.nvim_buf_delete(b, { force = true })
      end
    end
    vim.cmd("silent! only")
  end)

  local function messages()
    local got
    require("elelem.daemon").request("session/context", { sessionId = H.session().id }, function(_, result)
      got = result.messages
    end)
    H.wait(function()
      return got ~= nil
    end, "session/context")
    return got
  end

  --- Waits for the buffer of message `n` to be the current one.
  local function opened(n)
    H.wait(function()
      return vim.api.nvim_buf_get_name(0):match("^elelem://context/.*/" .. n .. "$") ~= nil
    end, "message " .. n .. "'s buffer")
    return vim.api.nvim_get_current_buf()
  end

  it("opens a message with /context edit N and :w replaces its text", function()
    H.turn("!echo the first answer")
    vim.cmd("Elelem /context edit 3")
    local buf = opened(3)
    assert.are.same({ "the first answer" }, vim.api.nvim_buf_get_lines(buf, 0, -1, false))
    assert.are.equal("acwrite", vim.bo[buf].buftype)
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, { "an edited", "answer" })
    vim.cmd("write")
    H.wait(function()
      return #H.notified("message 3 edited") == 1
    end, "the edit")
    assert.is_false(vim.bo[buf].modified)
    assert.are.same({ role = "assistant", content = "an edited\nanswer" }, messages()[3])
    assert.matches("%(context: message 3 edited%)", H.text())
    -- written again, it edits again (what it holds now is what it opened with)
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, { "twice" })
    vim.cmd("write")
    H.wait(function()
      return #H.notified("message 3 edited") == 2
    end, "the second edit")
    assert.are.equal("twice", messages()[3].content)
  end)

  it(":ElelemContext edit N with an emptied buffer deletes the message", function()
    H.turn("!echo one")
    H.turn("!echo two")
    assert.are.equal(5, #messages())
    vim.cmd("ElelemContext edit 2")
    local buf = opened(2)
    assert.are.same({ "!echo one" }, vim.api.nvim_buf_get_lines(buf, 0, -1, false))
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, {})
    vim.cmd("write")
    H.wait(function()
      return not vim.api.nvim_buf_is_valid(buf)
    end, "the buffer to go")
    local now = messages()
    assert.are.equal(4, #now)
    assert.are.same({ "system", "assistant", "user", "assistant" }, vim.tbl_map(function(m)
      return m.role
    end, now))
    assert.are.equal(1, #H.notified("message 2 deleted"))
  end)

  it("says clearly what it cannot open, and keeps a bad line in the prompt area", function()
    H.turn("!echo hi")
    local s = H.session()
    vim.cmd("Elelem /context edit 1")
    H.wait(function()
      return #H.notified("system prompt") == 1
    end, "the system prompt's refusal")
    vim.cmd("Elelem /context edit 99")
    H.wait(function()
      return #H.notified("no message 99: the context holds 3") == 1
    end, "the out-of-range refusal")
    vim.api.nvim_buf_set_lines(s:input(), 0, -1, false, {})
    assert.is_false(s:send("/context edit two"))
    assert.are.equal(1, #H.notified("takes a message number"))
    assert.matches("^elelem://prompt/", vim.api.nvim_buf_get_name(s:input()))
    for _, b in ipairs(vim.api.nvim_list_bufs()) do
      assert.is_nil(vim.api.nvim_buf_get_name(b):match("^elelem://context/"))
    end
  end)

  it("shows the daemon's refusals (invalid_edit, session_busy) and keeps the buffer", function()
    H.turn("!echo one")
    vim.cmd("Elelem /context edit 3")
    local buf = opened(3)
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, { "my edit" })
    -- meanwhile message 3 goes (another door): the daemon refuses the place
    H.turn("/context delete 2-3")
    vim.api.nvim_set_current_buf(buf)
    vim.cmd("write")
    H.wait(function()
      return #H.notified("message 3 not edited") == 1
    end, "the refusal")
    assert.matches("invalid_edit", H.notified("message 3 not edited")[1].message)
    assert.is_true(vim.bo[buf].modified)
    assert.are.same({ "my edit" }, vim.api.nvim_buf_get_lines(buf, 0, -1, false))
    -- while a turn runs the session is busy: said, and the buffer is kept
    H.turn("!echo two")
    vim.cmd("Elelem /context edit 3")
    buf = opened(3)
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, { "edited while busy" })
    local answer
    vim.ui.input = function(_, done)
      answer = done
    end
    vim.cmd('Elelem !tool interview {"question":"wait?"}')
    H.wait(function()
      return answer ~= nil
    end, "the turn to wait")
    vim.api.nvim_set_current_buf(buf)
    vim.cmd("write")
    H.wait(function()
      return #H.notified("message 3 not edited") == 2
    end, "the busy refusal")
    assert.matches("session_busy", H.notified("message 3 not edited")[2].message)
    assert.is_true(vim.bo[buf].modified)
    answer("yes")
    H.idle()
    assert.are.equal("two", messages()[3].content)
  end)
end)
