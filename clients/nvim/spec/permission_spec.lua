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
    assert.are.same({ items = { "allow", "deny", "always" }, prompt = "Allow execute: echo hi?",
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
end)
