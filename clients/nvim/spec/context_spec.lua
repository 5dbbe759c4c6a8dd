-- :ElelemSelection, :ElelemContext, :ElelemNew and workspace trust for project plugins.
local H = require("spec.helpers")

describe("context", function()
  teardown(H.shutdown)

  before_each(function()
    H.setup()
    H.reset()
  end)

  it(":ElelemSelection sends the lines with their file name and line numbers", function()
    local file = H.project .. "/calc.lua"
    vim.fn.writefile({ "local M = {}", "function M.add(a, b)", "  return a + b", "end", "return M" }, file)
    vim.cmd.edit(vim.fn.fnameescape(file))
    vim.cmd("2,4ElelemSelection what does this do?")
    H.idle()
    local text = H.text()
    assert.matches("## You\n\n    what does this do%?\n\n    calc%.lua lines 2%-4:\n\n    ```lua\n" ..
      "    function M%.add%(a, b%)\n      return a %+ b\n    end\n    ```\n", text)
    -- exactly that reached the model
    local messages
    require("elelem.daemon").request("session/context", { sessionId = H.session().id }, function(_, result)
      messages = result.messages
    end)
    H.wait(function()
      return messages ~= nil
    end, "session/context")
    assert.are.same({ role = "user", content = "what does this do?\n\ncalc.lua lines 2-4:\n\n```lua\n"
      .. "function M.add(a, b)\n  return a + b\nend\n```" }, messages[2])
    vim.cmd("silent! only")
    vim.cmd.bwipeout({ file, bang = true })
  end)

  it(":ElelemSelection without a prompt waits in the prompt area", function()
    vim.cmd.enew()
    vim.api.nvim_buf_set_lines(0, 0, -1, false, { "one", "two" })
    vim.cmd("1ElelemSelection")
    local s = H.session()
    assert.are.equal(s:input(), vim.api.nvim_get_current_buf())
    assert.are.same({ "", "", "[No Name] lines 1-1:", "", "```", "one", "```" },
      vim.api.nvim_buf_get_lines(0, 0, -1, false))
    assert.is_false(s.busy)
  end)

  it("/shell runs in the session's directory and leaves its transcript in the prompt area", function()
    H.turn("!echo hi")
    vim.cmd("Elelem /shell pwd; echo from-the-shell")
    local s = H.session()
    H.wait(function()
      return table.concat(vim.api.nvim_buf_get_lines(s:input(), 0, -1, false), "\n"):find("from-the-shell", 1, true) ~= nil
    end, "the transcript")
    local prompt = vim.api.nvim_buf_get_lines(s:input(), 0, -1, false)
    assert.are.same({ "", "", "Shell session:", "", "```", "$ pwd; echo from-the-shell",
      vim.uv.fs_realpath(H.project), "from-the-shell", "```" }, prompt)
    assert.are.equal(s:input(), vim.api.nvim_get_current_buf())
    assert.is_false(s.busy)
  end)

  it(":ElelemContext shows what the model sees", function()
    H.turn("!echo remembered")
    vim.cmd("ElelemContext")
    H.idle()
    local context = H.text():match("## /context(.*)$")
    assert.matches("remembered", context)
  end)

  it(":ElelemNew starts a fresh session", function()
    H.turn("!echo old news")
    local old = H.session().id
    vim.cmd("ElelemNew")
    assert.are.same({ "" }, H.lines())
    H.turn("/context")
    assert.is_not.equal(old, H.session().id)
    assert.is_nil(H.text():find("old news", 1, true))
  end)

  it("loads project plugins only when the workspace is trusted", function()
    local project = H.tmp .. "/plugged"
    vim.fn.mkdir(project .. "/.agents/plugins", "p")
    vim.fn.writefile({
      "def register(plugin):",
      "    @plugin.command('hello', 'Say hello')",
      "    def hello(session, args):",
      "        session.output.say('hello from the project')",
    }, project .. "/.agents/plugins/hello.py")
    local function commands()
      return vim.tbl_map(function(c)
        return c.name
      end, H.session():commands())
    end
    -- headless, never asked: not trusted
    H.setup({ cwd = project })
    H.turn("!echo hi")
    assert.is_false(vim.tbl_contains(commands(), "hello"))
    -- allowed in Neovim's trust database (`:trust` on the directory)
    local dir = vim.api.nvim_create_buf(false, true) -- as `:edit .agents/plugins` then `:trust`
    vim.api.nvim_buf_set_name(dir, project .. "/.agents/plugins")
    assert.is_true(vim.secure.trust({ action = "allow", bufnr = dir }))
    vim.api.nvim_buf_delete(dir, { force = true })
    vim.cmd("ElelemNew")
    H.turn("!echo hi")
    assert.is_true(vim.tbl_contains(commands(), "hello"))
    -- denied there
    vim.secure.trust({ action = "deny", path = project .. "/.agents/plugins" })
    vim.cmd("ElelemNew")
    H.turn("!echo hi")
    assert.is_false(vim.tbl_contains(commands(), "hello"))
    -- setup({trust = true}) overrides
    H.setup({ cwd = project, trust = true })
    vim.cmd("ElelemNew")
    H.turn("/hello")
    assert.matches("hello from the project", H.text())
  end)

  it("sends vim.secure's answer for the folder, and nothing for an unknown one", function()
    local trust = require("elelem.trust")
    local project = H.tmp .. "/ruled"
    vim.fn.mkdir(project .. "/.agents", "p")
    vim.fn.writefile({ "execute deny" }, project .. "/.agents/permissions")
    H.setup({ cwd = project })
    assert.is_nil(trust.decide(project)) -- unknown: the daemon's trusted-folders file decides
    H.turn("!echo hi") -- headless: untrusted, and nothing asked
    assert.are.same({ "permission rule (.agents/permissions): execute deny" }, H.session().info.trust.loads)
    assert.is_false(H.session().info.trust.trusted)
    assert.is_false(trust.due(H.session().info))
    local real = vim.uv.fs_realpath(project)
    local dir = vim.api.nvim_create_buf(false, true) -- as `:edit .` then `:trust`
    vim.api.nvim_buf_set_name(dir, real)
    assert.is_true(vim.secure.trust({ action = "allow", bufnr = dir }))
    vim.api.nvim_buf_delete(dir, { force = true })
    assert.is_true(trust.decide(project))
    vim.secure.trust({ action = "deny", path = real })
    assert.is_false(trust.decide(project))
    vim.secure.trust({ action = "remove", path = real })
  end)
end)
