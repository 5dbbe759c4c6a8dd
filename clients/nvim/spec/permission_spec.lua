-- Permission questions from the daemon's policy (protocol.md "Permissions"): the real
-- daemon asks before `execute` and before a write outside the session's directory.
local H = require("spec.helpers")

describe("a permission question from the daemon", function()
  teardown(H.shutdown)

  local select = vim.ui.select
  local offered

  local function answer(choice)
    vim.ui.select = function(items, opts, done)
      offered = { items = items, prompt = opts.prompt, kind = opts.kind }
      vim.schedule(function()
        done(choice)
      end)
    end
  end

  before_each(function()
    H.setup()
    H.reset()
    offered = nil
  end)

  after_each(function()
    vim.ui.select = select
  end)

  it("runs the tool when allowed", function()
    answer("allow")
    H.turn('!tool execute {"command":"echo hi"}')
    assert.are.same({ items = { "allow", "deny", "always", "never" }, prompt = "Allow execute: echo hi?",
      kind = "elelem.permission" }, offered)
    assert.matches('\n%+ execute%({"command":"echo hi"}%) ✓\n%? Allow execute: echo hi%? → allow\n', H.text())
  end)

  it("gives the model a failure when denied", function()
    answer("deny")
    H.turn('!tool execute {"command":"echo hi"}')
    assert.matches("✗ User denied permission: execute\n", H.text())
  end)

  it("shows the diff of a write outside the session's directory, once", function()
    answer("allow")
    local outside = H.tmp .. "/outside.txt"
    H.turn(('!tool write {"path":"%s","content":"new text\\n"}'):format(outside))
    assert.are.same({ "new text" }, vim.fn.readfile(outside))
    local text = H.text()
    assert.matches("```diff\n.-%+new text\n```\n%? Allow write: .-outside%.txt%? → allow\n", text)
    local _, count = text:gsub("```diff", "")
    assert.are.equal(1, count)
  end)

  it("redraws the chat before the built-in vim.ui.select asks", function()
    local columns, lines = vim.o.columns, vim.o.lines
    vim.o.columns, vim.o.lines = 200, 40
    local screen
    vim.ui.select = function(_, _, done)
      screen = H.screen() -- the built-in select blocks in inputlist(): what is painted now is all the user sees
      vim.schedule(function()
        done("allow")
      end)
    end
    local outside = H.tmp .. "/seen.txt"
    H.turn(('!tool write {"path":"%s","content":"a line to see\\n"}'):format(outside))
    vim.o.columns, vim.o.lines = columns, lines
    assert.matches("let me check%.", screen)
    assert.matches("%+ write%(", screen)
    assert.matches("%+a line to see", screen)
  end)

  it("shows the whole command and the diff in the prompt", function()
    local prompts = {}
    vim.ui.select = function(_, opts, done)
      table.insert(prompts, opts.prompt)
      vim.schedule(function()
        done("deny")
      end)
    end
    local command = "echo " .. ("very-long-argument-"):rep(20) .. "end"
    H.turn(('!tool execute {"command":"%s"}'):format(command))
    assert.is_truthy(prompts[1]:find(command, 1, true), prompts[1])
    local outside = H.tmp .. "/shown.txt"
    H.turn(('!tool write {"path":"%s","content":"shown in the prompt\\n"}'):format(outside))
    assert.matches("\n%+shown in the prompt\n", prompts[2])
    assert.matches("Allow write: .-shown%.txt%?$", prompts[2])
  end)
end)
