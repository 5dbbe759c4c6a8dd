-- Cancelling a turn, and input/ask answered through vim.ui.
local H = require("spec.helpers")

describe("a running turn", function()
  teardown(H.shutdown)

  local ui = { input = vim.ui.input, select = vim.ui.select }

  before_each(function()
    H.setup()
    H.reset()
  end)

  after_each(function()
    vim.ui.input, vim.ui.select = ui.input, ui.select
  end)

  it("is cancelled by :ElelemCancel and keeps what streamed", function()
    vim.cmd("Elelem !stream 200 20")
    H.wait(function()
      return H.text():find("tok3 ", 1, true) ~= nil
    end, "some deltas")
    vim.cmd("ElelemCancel")
    H.idle()
    local text = H.text()
    assert.matches("tok3 .*\n%[cancelled%]$", text)
    assert.is_nil(text:find("tok199", 1, true))
    -- the conversation goes on, and the model was told about the interruption
    H.turn("!echo after")
    assert.matches("\nafter$", H.text())
    H.turn("/context")
    assert.matches("%[cancelled%]", H.text():match("## /context(.*)$"))
  end)

  it("says so when there is nothing to cancel", function()
    vim.cmd("ElelemCancel")
    assert.are.equal(1, #H.notified("no turn is running"))
  end)

  it("asks the user through vim.ui.input and sends the answer back", function()
    local asked
    vim.ui.input = function(opts, done)
      asked = opts.prompt
      vim.defer_fn(function()
        done("yes, go on")
      end, 50)
    end
    local seen, stop = H.record()
    H.turn('!tool interview {"question":"ok?"}')
    stop()
    assert.matches("^ok%?", asked)
    local result
    for _, event in ipairs(seen) do
      if event.method == "event/result" then
        result = event.params
      end
    end
    assert.are.same({ answer = "yes, go on", ok = true }, result.result)
    local text = H.text()
    assert.matches('\n%+ interview%({"question":"ok%?"}%) ✓\n%? ok%? → yes, go on\n', text)
    assert.matches("done.$", text)
  end)

  it("offers the options with vim.ui.select", function()
    local offered
    vim.ui.select = function(items, opts, done)
      offered = { items = items, prompt = opts.prompt }
      vim.schedule(function()
        done(items[2], 2)
      end)
    end
    local seen, stop = H.record()
    H.turn('!tool interview {"question":"which?","options":["red","blue"]}')
    stop()
    assert.are.same({ items = { "red", "blue" }, prompt = "which?" }, offered)
    local answers = vim.tbl_filter(function(event)
      return event.method == "event/result"
    end, seen)
    assert.are.equal("blue", answers[1].params.result.answer)
  end)

  it("closes its question when the turn is cancelled", function()
    local late
    vim.ui.input = function(_, done)
      late = done -- the user never answers
    end
    vim.cmd('Elelem !tool interview {"question":"still there?"}')
    H.wait(function()
      return late ~= nil
    end, "the question")
    vim.cmd("ElelemCancel")
    H.idle()
    local text = H.text()
    assert.matches("%? still there%? → %(dismissed: the turn ended%)\n%[cancelled%]$", text)
    late("too late")
    assert.are.equal(text, H.text())
  end)

  it("answers nothing when the user dismisses the question", function()
    vim.ui.input = function(_, done)
      done(nil) -- at once, before the handler could wait
    end
    H.turn('!tool interview {"question":"ok?"}')
    assert.matches("✗ the user gave no answer\n%? ok%? → %(no answer%)", H.text())
  end)
end)

describe("a permission question", function()
  local select = vim.ui.select

  before_each(function()
    H.setup()
    H.reset()
  end)

  after_each(function()
    vim.ui.select = select
  end)

  it("names the tool without a prompt of its own", function()
    local offered
    vim.ui.select = function(items, opts, done)
      offered = opts.prompt
      done(nil)
    end
    coroutine.wrap(function()
      require("elelem.ask").answer({ kind = "permission", tool = { name = "execute", arguments = { command = "ls" } },
        options = { "allow", "deny", "always" } })
    end)()
    assert.are.equal('Allow execute({"command":"ls"})?', offered)
  end)

  it("keeps a huge diff's prompt within the screen, the question and the whole command last", function()
    local diff = {}
    for i = 1, 5000 do
      table.insert(diff, "+line " .. i)
    end
    local command = ("x"):rep(3000)
    local prompt = require("elelem.ask").prompt({ kind = "permission", prompt = "Allow edit: a.txt?",
      tool = { name = "edit", arguments = { path = "a.txt", command = command }, diff = table.concat(diff, "\n") } })
    local lines = vim.split(prompt, "\n", { plain = true })
    assert.is_true(#lines <= vim.o.lines, #lines)
    assert.are.equal("+line 1", lines[1])
    assert.matches("^… %d+ more lines: the whole diff is in the chat$", lines[#lines - 2])
    assert.are.same({ "Allow edit: a.txt?", "command: " .. command }, vim.list_slice(lines, #lines - 1))
  end)

  it("names the tool, shows its diff and offers allow / deny / always", function()
    H.turn("!echo hi") -- a session with a chat
    local offered
    vim.ui.select = function(items, opts, done)
      offered = { items = items, prompt = opts.prompt, kind = opts.kind }
      vim.schedule(function()
        done("always")
      end)
    end
    local answer
    coroutine.wrap(function() -- as vim.lsp.rpc runs server requests
      answer = require("elelem.ask").answer({
        sessionId = H.session().id,
        kind = "permission",
        prompt = "Allow write?",
        tool = { name = "write", arguments = { path = "a.txt" }, diff = "--- a.txt\n+++ a.txt\n+hello\n" },
        options = { "allow", "deny", "always" },
      })
    end)()
    H.wait(function()
      return answer ~= nil
    end, "the answer")
    assert.are.same({ text = "always" }, answer)
    -- the prompt holds the diff and what the question leaves out (the built-in select shows nothing else)
    assert.are.same({ items = { "allow", "deny", "always" }, kind = "elelem.permission",
      prompt = "--- a.txt\n+++ a.txt\n+hello\nAllow write?\npath: a.txt" }, offered)
    assert.matches("```diff\n%-%-%- a%.txt\n%+%+%+ a%.txt\n%+hello\n```\n%? Allow write%? → always$", H.text())
  end)
end)
