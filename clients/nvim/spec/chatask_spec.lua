-- Questions in the chat (issue 31) against hostile text: what the daemon sends is bounded
-- and cleaned before it reaches the chat, and the answer sent back is the option as given.
local H = require("spec.helpers")

describe("questions in the chat, hostile text", function()
  teardown(H.shutdown)

  it("bounds the answers, the lines and their width, and cleans control characters", function()
    H.setup({ questions = "chat" })
    H.reset()
    H.turn("!echo hi")
    local s = H.session()
    local chatask = require("elelem.chatask")
    local prompt = {}
    for i = 1, 1000 do
      prompt[i] = "line " .. i .. "\0\27[31m" .. ("x"):rep(i == 1 and 5000 or 3)
    end
    local options = {}
    for i = 1, 10000 do
      options[i] = "opt" .. i .. "\27]52;c;evil\7"
    end
    local got
    chatask.question(s, { sessionId = s.id }, table.concat(prompt, "\n"), options, function(answer)
      got = answer
    end)
    local lines = H.lines()
    assert.is_true(#lines < 400, "chat lines: " .. #lines)
    for _, line in ipairs(lines) do
      assert.is_nil(line:find("%c"), line)
      assert.is_true(vim.fn.strchars(line) <= 2010, "a line of " .. vim.fn.strchars(line))
    end
    local answers = 0
    for _, line in ipairs(lines) do
      answers = answers + (line:find("^  %d+ → opt") and 1 or 0)
    end
    assert.are.equal(50, answers)
    assert.is_true(chatask.answer("opt7"))
    assert.are.equal(options[7], got) -- the option as the daemon gave it
    assert.are.same({}, chatask.open)
  end)
end)
