-- A real `task` sub-agent (issue 20) through the real daemon: the child's events carry
-- parentToolCallId and are drawn indented under the task call; the child's own ids
-- (here its call is `stub-1`, as the parent's task call) do not mix with the parent's.
local H = require("spec.helpers")

describe("a task sub-agent", function()
  teardown(H.shutdown)

  before_each(function()
    H.setup()
    H.reset()
  end)

  it("draws the child's tool calls indented under the task call", function()
    local seen, stop = H.record()
    local read = { type = "doing", id = "stub-1", name = "read", arguments = { path = "README.md" } }
    H.turn("!tool task " .. vim.json.encode({ prompt = "!events " .. vim.json.encode({ read }) }))
    stop()
    local nested = vim.tbl_filter(function(e)
      return e.params.parentToolCallId ~= nil
    end, seen)
    assert.is_true(#nested >= 2) -- the child's doing and result at least (the real thing ran)
    local ids = vim.tbl_map(function(e)
      return e.params.id
    end, vim.tbl_filter(function(e)
      return e.method == "event/doing"
    end, seen))
    assert.are.same({ "stub-1", "stub-1" }, ids) -- the parent's task call and the child's read
    local lines = H.lines()
    local at = vim.fn.match(lines, "^+ task(")
    assert.is_true(at >= 0, H.text())
    assert.matches("^%+ task%(.*%) ✓$", lines[at + 1])
    assert.are.equal('    + read({"path":"README.md"}) ✓', lines[at + 2])
    local _, ticks = H.text():gsub("✓", "")
    assert.are.equal(2, ticks) -- one each: the parent's result went to the task line
    assert.matches("done%.$", H.text())
  end)
end)
