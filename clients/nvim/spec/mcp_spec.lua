-- MCP servers (issue 19): setup({ mcpServers }) reaches session/new, the status shows in
-- the chat, :ElelemMcp and :checkhealth, an MCP tool runs, and the OAuth browser step
-- (input/ask kind "authorize") offers vim.ui.open and is withdrawn once done.
local H = require("spec.helpers")

local servers = vim.fs.normalize(H.root .. "/../../tests/mcp/servers")

describe("MCP servers", function()
  teardown(H.shutdown)

  local select, open = vim.ui.select, vim.ui.open

  after_each(function()
    vim.ui.select, vim.ui.open = select, open
  end)

  local function ready(name)
    H.wait(function()
      return H.text():find("MCP " .. name .. " %(client, %w+%): ready") ~= nil
    end, name .. " to be ready", 60000)
  end

  it("passes setup's servers on session/new and shows their state", function()
    H.setup({ mcpServers = { demo = { command = H.python, args = { servers .. "/demo.py" } } } })
    H.reset()
    H.turn("!echo hi")
    assert.matches("MCP demo %(client, stdio%): %w+", H.text()) -- starting, or ready already
    ready("demo")
    local _, lines = H.text():gsub("MCP demo ", "")
    assert.are.equal(1, lines) -- one line, updated in place
    assert.matches("MCP demo %(client, stdio%): ready, %d+ tools", H.text())
    local lines = require("elelem").mcp()
    assert.matches("^demo %(client, stdio%): ready, %d+ tools$", lines[1])
    assert.are.equal(1, #H.notified("elelem MCP servers:\ndemo (client, stdio): ready"))
    -- an MCP tool asks first (MCP tools default to ask), then runs
    vim.ui.select = function(_, _, done)
      vim.schedule(function()
        done("allow")
      end)
    end
    H.turn('!tool demo__add {"a": 2, "b": 3}')
    assert.matches("%+ demo__add%(.-%) ✓", H.text())
    local call = H.session().chat:call_at((function()
      for i, line in ipairs(H.lines()) do
        if line:find("+ demo__add", 1, true) then
          return i - 1
        end
      end
    end)())
    assert.matches("5", vim.json.encode(call.result))
    -- and :checkhealth names it
    vim.cmd("checkhealth elelem")
    local report = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
    assert.matches("MCP demo %(client, stdio%): ready", report)
    vim.cmd("bwipeout")
    -- session/load passes them too: a resumed session starts its servers again
    local old = H.session().id
    vim.cmd("ElelemNew")
    vim.cmd("ElelemResume")
    H.wait(function()
      return H.session().id == old
    end, "the session to load")
    ready("demo")
    assert.are.equal("session/load", H.session().mcp.servers[1].origin)
  end)

  it("a failing server is one line updated in place, never cut into a streaming reply (item 6)", function()
    H.setup({
      env = vim.tbl_extend("force", H.options.env, { ELELEM_MCP_BACKOFF = "0.05", ELELEM_MCP_RETRIES = "4" }),
      mcpServers = { bad = { command = H.python, args = { "-c", "import sys; sys.stderr.write('no luck\\n'); sys.exit(3)" } } },
    })
    H.reset()
    local seen, stop = H.record()
    H.turn("!stream 150 10") -- a reply streams while the server fails and retries
    H.wait(function()
      return (H.session().mcp.servers[1] or {}).state == "failed"
    end, "the server to give up", 60000)
    stop()
    local events = 0
    for _, note in ipairs(seen) do
      events = events + (note.method == "event/mcp" and 1 or 0)
    end
    assert.is_true(events >= 3, "the server's state changed " .. events .. " times")
    local text = H.text()
    local _, count = text:gsub("MCP bad ", "")
    assert.are.equal(1, count)
    assert.matches("MCP bad %(client, stdio%): failed · %d attempts · error: ", text)
    -- the reply is whole: 150 tokens on one paragraph, nothing between them
    local reply = {}
    for i = 0, 149 do
      reply[#reply + 1] = "tok" .. i .. " "
    end
    assert.is_truthy(text:find(vim.trim(table.concat(reply)), 1, true), text)
  end)

  it("names a bad entry as a problem and starts the others", function()
    H.setup({ mcpServers = { { name = "broken" } } })
    H.reset()
    H.turn("!echo hi")
    assert.matches("MCP problem: session/new: mcpServers%[0%]", H.text())
  end)

  it("offers to open the authorization URL, and closes the question once authorized", function()
    local port = 20000 + (vim.fn.getpid() % 20000)
    local server = vim.system({ H.python, servers .. "/authed.py", tostring(port) }, { env = { MARKS = H.tmp } })
    H.wait(function()
      local probe = vim.system({ "curl", "-s", "-o", "/dev/null", "http://127.0.0.1:" .. port .. "/" }):wait()
      return probe.code == 0
    end, "the OAuth server")
    local asked, opened
    vim.ui.open = function(url)
      opened = url
      -- the "browser": the authorization server approves and redirects to the daemon
      vim.system({ "curl", "-s", "-L", "-o", "/dev/null", url })
      return {}, nil
    end
    vim.ui.select = function(items, opts, done)
      asked = { items = items, prompt = opts.prompt, kind = opts.kind }
      vim.schedule(function()
        done("open")
      end)
    end
    H.setup({ mcpServers = { secure = { type = "http", url = ("http://127.0.0.1:%d/mcp"):format(port) } } })
    H.reset()
    H.turn("!echo hi")
    H.wait(function()
      return asked ~= nil
    end, "the authorize question", 60000)
    assert.are.equal("elelem.authorize", asked.kind)
    assert.matches("http://127%.0%.0%.1:" .. port .. "/authorize%?", asked.prompt)
    ready("secure")
    assert.matches("^http://127%.0%.0%.1:" .. port .. "/authorize%?", opened)
    server:kill(9)
  end)

  it("asks the authorize question in the chat by default; `open` there opens the URL", function()
    local port = 20002 + (vim.fn.getpid() % 20000)
    local server = vim.system({ H.python, servers .. "/authed.py", tostring(port) }, { env = { MARKS = H.tmp } })
    H.wait(function()
      return vim.system({ "curl", "-s", "-o", "/dev/null", "http://127.0.0.1:" .. port .. "/" }):wait().code == 0
    end, "the OAuth server")
    local opened
    vim.ui.open = function(url)
      opened = url
      vim.system({ "curl", "-s", "-L", "-o", "/dev/null", url })
      return {}, nil
    end
    vim.ui.select = function()
      error("no vim.ui.select: the question is in the chat")
    end
    H.setup({ questions = "chat", mcpServers = { inchat = { type = "http", url = ("http://127.0.0.1:%d/mcp"):format(port) } } })
    H.reset()
    H.turn("!echo hi")
    H.wait(function()
      return H.text():find(" → open", 1, true) ~= nil
    end, "the authorize question in the chat", 60000)
    assert.matches("/authorize%?", H.text())
    assert.is_true(require("elelem").answer("open"))
    ready("inchat")
    assert.matches("^http://127%.0%.0%.1:" .. port .. "/authorize%?", opened)
    server:kill(9)
  end)

  it("closes an unanswered authorize question when the daemon withdraws it", function()
    local port = 20001 + (vim.fn.getpid() % 20000)
    local server = vim.system({ H.python, servers .. "/authed.py", tostring(port) }, { env = { MARKS = H.tmp } })
    H.wait(function()
      return vim.system({ "curl", "-s", "-o", "/dev/null", "http://127.0.0.1:" .. port .. "/" }):wait().code == 0
    end, "the OAuth server")
    local prompt
    vim.ui.select = function(_, opts)
      prompt = opts.prompt -- the user does not answer here: they open the URL themselves
    end
    H.setup({ mcpServers = { again = { type = "http", url = ("http://127.0.0.1:%d/mcp"):format(port) } } })
    H.reset()
    H.turn("!echo hi")
    H.wait(function()
      return prompt ~= nil
    end, "the authorize question", 60000)
    local url = prompt:match("(http://%S+/authorize%?%S+)")
    vim.system({ "curl", "-s", "-L", "-o", "/dev/null", url })
    ready("again")
    H.wait(function()
      return H.text():find("(withdrawn: no longer needed)", 1, true) ~= nil
    end, "the question to be withdrawn")
    server:kill(9)
  end)

  it("opens only http and https URLs", function()
    local ask = require("elelem.ask")
    assert.is_true(ask.openable("http://127.0.0.1:9/authorize?x=1"))
    assert.is_true(ask.openable("https://auth.example/authorize"))
    for _, url in ipairs({ "file:///etc/passwd", "javascript:alert(1)", "http://a b", "http://a\nb", "", 42,
      "https://" .. ("a"):rep(9000) }) do
      assert.is_false(ask.openable(url), tostring(url))
    end
  end)
end)
