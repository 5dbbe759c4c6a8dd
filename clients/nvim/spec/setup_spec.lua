-- setup(): options, and a clear error for each bad one.
local H = require("spec.helpers")
local config = require("elelem.config")

describe("setup()", function()
  teardown(H.shutdown)

  after_each(function()
    H.setup()
  end)

  it("merges options over the defaults, replacing lists", function()
    require("elelem").setup({ cmd = { "elelem-dev" }, chat = { split = "below" } })
    assert.are.same({ "elelem-dev" }, config.options.cmd)
    assert.are.equal("below", config.options.chat.split)
    assert.are.equal(5, config.options.chat.input_height)
    assert.are.equal("ask", config.options.trust)
    require("elelem").setup()
    assert.are.same({ "elelem", "daemon" }, config.options.cmd)
  end)

  local bad = {
    { { cmd = "elelem daemon" }, 'cmd must be a non-empty list of strings, got "elelem daemon"' },
    { { cmd = {} }, "cmd must be a non-empty list of strings, got {}" },
    { { cmd = { "elelem", 1 } }, "cmd must be a non-empty list of strings" },
    { { env = { X = 1 } }, "env.X must be a string, got 1" },
    { { provider = 3 }, "provider must be a string, got 3" },
    { { trust = "yes" }, 'trust must be "ask", true or false, got "yes"' },
    { { log_level = "loud" }, 'log_level must be "debug", "info", "warn" or "error", got "loud"' },
    { { chat = { split = "middle" } }, 'chat.split must be "left", "right", "above" or "below"' },
    { { chat = { size = 0 } }, "chat.size must be a positive number, got 0" },
    { { chat = "wide" }, 'chat must be a table, got "wide"' },
    { { thinking = { folded = "yes" } }, 'thinking.folded must be a boolean, got "yes"' },
    { { prestart = 1 }, "prestart must be a boolean, got 1" },
    { { review = "on" }, 'review must be a table, got "on"' },
    { { review = { save = "yes" } }, 'review.save must be a boolean, got "yes"' },
    { { review = { keys = { accept = 1 } } }, 'review.keys.accept must be a string ("" for none), got 1' },
    { { review = { keys = "ga" } }, 'review.keys must be a table, got "ga"' },
    { { mcpServers = "files" }, 'mcpServers must be a table (a list or a map), got "files"' },
    { { editor_state = "on" }, 'editor_state must be a boolean, got "on"' },
    { "opts", "setup()'s argument must be a table" },
  }
  for _, case in ipairs(bad) do
    it("rejects " .. vim.inspect(case[1], { newline = " ", indent = "" }), function()
      local ok, err = pcall(require("elelem").setup, case[1])
      assert.is_false(ok)
      assert.is_truthy(err:find("elelem.setup: " .. case[2], 1, true), err)
    end)
  end

  it("prestart: the daemon and this tab's session start in the background", function()
    H.reset()
    H.shutdown()
    local daemon = require("elelem.daemon")
    assert.are.equal("stopped", daemon.state())
    local start = vim.uv.hrtime()
    H.setup({ prestart = true })
    H.wait(function()
      return H.session().id ~= nil
    end, "the prestarted session")
    local ms = (vim.uv.hrtime() - start) / 1e6
    io.stdout:write(("\nprestart: session ready %.0f ms after setup()\n"):format(ms))
    assert.are.equal("ready", daemon.state())
    local id = H.session().id
    H.turn("!echo hi")
    assert.are.equal(id, H.session().id, "the chat used the prestarted session")
    assert.is_truthy(H.text():find("hi", 1, true))
  end)

  it("without prestart nothing starts before the first command", function()
    H.reset()
    H.shutdown()
    H.setup()
    vim.wait(200)
    assert.are.equal("stopped", require("elelem.daemon").state())
    assert.is_nil(H.session().id)
  end)

  it("keeps the previous options after a bad call", function()
    require("elelem").setup({ provider = "stub" })
    pcall(require("elelem").setup, { provider = 3 })
    assert.are.equal("stub", config.options.provider)
  end)
end)
