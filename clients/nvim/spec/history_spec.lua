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

  it(":ElelemResume brings back the last conversation of this directory", function()
    local dir = H.tmp .. "/resumable"
    vim.fn.mkdir(dir, "p")
    H.setup({ cwd = dir })
    H.turn("!echo the first answer")
    H.turn("!echo the second answer")
    local old = H.session().id
    vim.cmd("ElelemNew")
    vim.cmd("tabnew")
    H.turn("!echo a newer session") -- open in another tab, so not offered
    vim.cmd("tabprevious")
    vim.cmd("ElelemResume")
    H.wait(function()
      return H.session().id == old
    end, "the session to load")
    local lines = H.lines()
    assert.are.same({ "## You", "", "    !echo the first answer", "", "## elelem", "the first answer", "",
      "## You", "", "    !echo the second answer", "", "## elelem", "the second answer" }, vim.list_slice(lines, 1, 13))
    assert.matches("%(resumed: !echo the first answer%)$", H.text())
    -- the conversation goes on where it was
    H.turn("!echo the third answer")
    local messages
    require("elelem.daemon").request("session/context", { sessionId = old }, function(_, result)
      messages = result.messages
    end)
    H.wait(function()
      return messages ~= nil
    end, "session/context")
    assert.are.same({ "the first answer", "the second answer", "the third answer" }, vim.tbl_map(function(m)
      return m.content
    end, vim.tbl_filter(function(m)
      return m.role == "assistant"
    end, messages)))
    vim.cmd("tabonly")
  end)

  it("redraws the tool calls, their diffs and failures between the messages", function()
    local dir = H.tmp .. "/with-tools"
    vim.fn.mkdir(dir, "p")
    vim.fn.writefile({ "# kept" }, dir .. "/notes.md")
    H.setup({ cwd = dir })
    H.turn('!tool read {"path":"notes.md"}')
    H.turn("!tool read {}")
    vim.cmd('Elelem !tool write {"path":"new.txt","content":"a new line\\n"}')
    H.wait(function() -- a reviewing client: the new file is reviewed first
      return #require("elelem.review").open > 0 or not H.session().busy
    end, "the review")
    assert(#require("elelem.review").open > 0, "the turn ended with no review:\n" .. H.text())
    require("elelem").accept()
    H.idle()
    local live = H.lines()
    local old = H.session().id
    vim.cmd("ElelemNew")
    vim.cmd("ElelemResume")
    H.wait(function()
      return H.session().id == old
    end, "the session to load")
    local text = H.text()
    -- as they were drawn live, the thinking (never stored) aside
    assert.matches('## elelem\n%+ read%({"path":"notes.md"}%) ✓\n\ndone%.\n', text)
    assert.matches("## elelem\n%+ read%({}%) ✗ object at root is missing required properties: path\n", text)
    assert.matches("%+ write%(.-%) ✓\n```diff\n.-%+a new line\n```\n", text) -- keys in any order
    local function tools(lines) -- each tool line's name and outcome
      local found = {}
      for _, line in ipairs(lines) do
        local name, outcome = line:match("^%+ (%S-)%(.*%)( [✓✗].*)$")
        if name then
          table.insert(found, name .. outcome)
        end
      end
      return found
    end
    assert.are.equal(3, #tools(live))
    assert.are.same(tools(live), tools(H.lines()))
    local _, diffs = text:gsub("```diff", "")
    assert.are.equal(1, diffs)
    vim.cmd("tabonly")
  end)

  it("brings back a history longer than one page, each page fetched (session/history)", function()
    local dir = H.tmp .. "/long"
    vim.fn.mkdir(dir, "p")
    H.setup({ cwd = dir })
    local pad = string.rep("p", 150000) -- each turn ~300 KB: the history spans pages of ~256 KB
    for n = 1, 3 do
      H.turn(("!echo turn %d %s"):format(n, pad))
    end
    local old = H.session().id
    vim.cmd("ElelemNew")
    vim.cmd("ElelemResume")
    H.wait(function()
      return H.session().id == old
    end, "the session to load")
    -- each turn's prompt: the line under its `## You` heading, shown as typed (indented);
    -- the 1,000-token window compacts every turn, and the summary each compaction left
    -- (which carries the user's words) is a message of its own, not a prompt typed
    local lines, prompts = H.lines(), {}
    for i, line in ipairs(lines) do
      if line == "## You" and (lines[i + 2] or ""):match("^    !echo turn %d ") then
        table.insert(prompts, lines[i + 2])
      end
    end
    assert.are.same({ "!echo turn 1 ", "!echo turn 2 ", "!echo turn 3 " }, vim.tbl_map(function(line)
      return line:sub(5, 17)
    end, prompts))
    vim.cmd("tabonly")
  end)

  it(":ElelemSessions picks a stored session", function()
    local dir = H.tmp .. "/pickable"
    vim.fn.mkdir(dir, "p")
    H.setup({ cwd = dir })
    H.turn("!echo picked one")
    local picked = H.session().id
    vim.cmd("ElelemNew")
    local offered
    vim.ui.select = function(items, opts, done)
      offered = vim.tbl_map(opts.format_item, items)
      for i, item in ipairs(items) do
        if item.sessionId == picked then
          return vim.schedule(function()
            done(item, i)
          end)
        end
      end
      done(nil)
    end
    vim.cmd("ElelemSessions")
    H.wait(function()
      return H.session().id == picked
    end, "the picked session")
    assert.is_true(#offered >= 1)
    assert.matches("^%d%d%d%d%-%d%d%-%d%d %d%d:%d%d:%d%d  !echo picked one  ", offered[1])
    assert.matches("## elelem\npicked one\n", H.text())
  end)

  it("says why a stored session cannot be loaded", function()
    require("elelem.history").load({ sessionId = "no-such-session" })
    H.wait(function()
      return #H.notified("cannot load the session") == 1
    end, "the message")
    assert.matches("unknown_session", H.notified("cannot load the session")[1].message)
  end)

  it("formats picker entries with time, title and directory", function()
    local line = require("elelem.history").format({
      sessionId = "x", cwd = "/tmp/p", title = "fix the parser", updatedAt = "2026-11-30T09:12:45.123Z" })
    assert.are.equal("2026-11-30 09:12:45  fix the parser  /tmp/p", line)
  end)
end)
