-- The client half of issue 20 that needs no daemon support: a sub-agent's events
-- (parentToolCallId) indented under the task call, and event/plan drawn in place (the
-- notifications are given to the client's router as the daemon sends them).
local H = require("spec.helpers")

describe("plan and sub-agent rendering", function()
  teardown(H.shutdown)

  before_each(function()
    H.setup()
    H.reset()
  end)

  it("indents a sub-agent's events under its task call", function()
    H.turn("!echo hi")
    local events = require("elelem.events")
    local id = H.session().id
    events.on_notification("event/doing", { sessionId = id, turnId = 9, id = "t1", name = "task", arguments = {} })
    events.on_notification("event/doing",
      { sessionId = id, turnId = 9, id = "c1", name = "read", arguments = { path = "a" }, parentToolCallId = "t1" })
    events.on_notification("event/saying", { sessionId = id, turnId = 9, text = "child text", parentToolCallId = "t1" })
    events.on_notification("event/result",
      { sessionId = id, turnId = 9, id = "c1", name = "read", ok = true, result = { ok = true }, parentToolCallId = "t1" })
    events.on_notification("event/result", { sessionId = id, turnId = 9, id = "t1", name = "task", ok = true, result = { ok = true } })
    local text = H.text()
    assert.matches('\n%+ task%({}%) ✓\n    %+ read%({"path":"a"}%) ✓', text)
    assert.is_nil(text:find("child text", 1, true))
  end)

  it("updates one plan block in place and starts a new one next turn", function()
    H.turn("!echo hi")
    local events = require("elelem.events")
    local id = H.session().id
    events.on_notification("event/plan", { sessionId = id, turnId = 1,
      entries = { { content = "one", status = "in_progress" }, { content = "two", status = "pending" } } })
    events.on_notification("event/say", { sessionId = id, turnId = 1, text = "after the plan", kind = "plain" })
    events.on_notification("event/plan", { sessionId = id, turnId = 1,
      entries = { { content = "one", status = "completed" }, { content = "two", status = "completed" },
        { content = "three", status = "pending" } } })
    local text = H.text()
    assert.matches("\nPlan:\n  %[x%] one\n  %[x%] two\n  %[ %] three\nafter the plan$", text)
    local _, blocks = text:gsub("Plan:", "")
    assert.are.equal(1, blocks)
    H.turn("!echo next")
    events.on_notification("event/plan", { sessionId = id, turnId = 2, entries = { { content = "new", status = "pending" } } })
    local _, now = H.text():gsub("Plan:", "")
    assert.are.equal(2, now)
  end)

  it("draws a hostile plan or MCP status safely", function()
    H.turn("!echo hi")
    local events = require("elelem.events")
    local id = H.session().id
    events.on_notification("event/plan", { sessionId = id, turnId = 1, entries = "not a list" })
    events.on_notification("event/plan", { sessionId = id, turnId = 1, entries = {
      { content = "two\nlines\r\0", status = "weird" }, "not an entry", { content = ("x"):rep(5000), status = "completed" } } })
    local text = H.text()
    assert.matches("\nPlan:\n  %[ %] two lines", text)
    assert.matches("\n  %[ %] not an entry\n", text)
    assert.matches("\n  %[x%] x+…$", text)
    for _, line in ipairs(H.lines()) do
      assert.is_true(#line < 1000)
    end
    events.on_notification("event/mcp", { sessionId = id, mcp = { servers = { { name = { 1 }, state = 3, tools = "x" }, "junk" },
      problems = "none" } })
    events.on_notification("event/mcp", { sessionId = id, mcp = "garbage" })
    assert.matches("MCP table: 0x%x+ %(%?, stdio%): 3", H.text())
  end)
end)
