-- Stored sessions (protocol.md draft, issue 8): what holds whether or not the daemon stores.
local H = require("spec.helpers")

describe("stored sessions", function()
  teardown(H.shutdown)

  local select = vim.ui.select

  before_each(function()
    H.setup()
    H.reset()
  end)

  after_each(function()
    vim.ui.select = select
  end)

  it(":ElelemResume says so when this directory has no stored session", function()
    local empty = H.tmp .. "/never-used"
    vim.fn.mkdir(empty, "p")
    H.setup({ cwd = empty })
    vim.cmd("ElelemResume")
    H.wait(function()
      return #H.notified("no stored session for " .. empty) == 1
    end, "the message")
  end)

  it("formats picker entries with time, title and directory", function()
    local line = require("elelem.history").format({
      sessionId = "x", cwd = "/tmp/p", title = "fix the parser", updatedAt = "2026-11-30T09:12:45.123Z" })
    assert.are.equal("2026-11-30 09:12:45  fix the parser  /tmp/p", line)
  end)
end)
