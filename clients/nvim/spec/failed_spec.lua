-- Failures look like failures (issue 40): a `list` of a missing path exits 2 with no
-- error, and the daemon's event says it failed: the chat marks it ✗ with its exit status,
-- while `grep` finding nothing (exit 1, expected) stays ✓.
local H = require("spec.helpers")

describe("a failed tool call", function()
  teardown(H.shutdown)

  before_each(function()
    H.setup()
    H.reset()
  end)

  it("is ✗ with its exit status; grep finding nothing is ✓", function()
    H.turn('!tools [["list",{"path":"missing"}],["grep",{"pattern":"no such words here"}]]')
    local text = H.text()
    assert.matches('%+ list%({"path":"missing"}%) ✗ exit 2', text)
    assert.matches('%+ grep%(.-%) ✓', text)
  end)
end)
