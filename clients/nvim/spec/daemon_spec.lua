-- The daemon's life: lazy start with processId, death reported once, restart on the next
-- command, shutdown on VimLeavePre, and a clear error when it cannot start.
local H = require("spec.helpers")
local daemon = require("elelem.daemon")

local function alive(pid)
  return vim.uv.kill(pid, 0) == 0
end

describe("the daemon", function()
  teardown(H.shutdown)

  before_each(function()
    H.setup()
    H.reset()
  end)

  it("starts lazily on the first command, initialized with this Neovim's pid", function()
    daemon.shutdown()
    assert.are.equal("stopped", daemon.state())
    assert.are.same({}, H.children())
    H.turn("!echo hi")
    assert.are.equal("ready", daemon.state())
    assert.are.equal(1, #H.children())
    assert.are.equal("elelem", daemon.info().serverInfo.name)
    assert.is_true(daemon.info().capabilities.inputAsk)
  end)

  it("is reported once when killed, and restarts on the next command", function()
    H.turn("!echo first")
    local old = H.children()[1]
    vim.cmd("Elelem !stream 200 20")
    H.wait(function()
      return H.text():find("tok1 ", 1, true) ~= nil
    end, "the turn to stream")
    vim.uv.kill(old, "sigkill")
    H.wait(function()
      return daemon.state() == "dead"
    end, "the exit to be seen")
    H.idle()
    local reports = H.notified("daemon exited")
    assert.are.equal(1, #reports)
    assert.matches("signal 9%)%. It restarts on the next command%.", reports[1].message)
    assert.matches("error: the daemon exited %(signal 9%)", H.text())
    assert.is_nil(H.session().id)

    H.turn("!echo back again")
    assert.are.equal("ready", daemon.state())
    local new = H.children()[1]
    assert.is_not.equal(old, new)
    assert.is_true(alive(new))
    assert.matches("\nback again$", H.text())
    assert.are.equal(1, #H.notified("daemon exited"))
  end)

  it("is shut down on VimLeavePre and on :ElelemRestart", function()
    H.turn("!echo hi")
    local pid = H.children()[1]
    vim.api.nvim_exec_autocmds("VimLeavePre", { group = "elelem" })
    assert.are.equal("stopped", daemon.state())
    H.wait(function()
      return not alive(pid)
    end, "the daemon process to end")
    assert.are.same({}, H.notified("daemon exited"))

    H.turn("!echo again")
    pid = H.children()[1]
    vim.cmd("ElelemRestart")
    H.wait(function()
      return daemon.state() == "stopped" and not alive(pid)
    end, "the daemon to stop")
    assert.are.same({}, H.notified("daemon exited"))
    H.turn("!echo and again")
    assert.matches("\nand again$", H.text())
    -- a prompt sent while the daemon stops waits for the next one
    pid = H.children()[1]
    vim.cmd("ElelemRestart")
    vim.cmd("Elelem !echo right after the restart")
    H.idle()
    assert.matches("\nright after the restart$", H.text())
    assert.is_false(alive(pid))
  end)

  it("gives a clear error when its command cannot start", function()
    daemon.shutdown()
    H.setup({ cmd = { "/nonexistent/elelem", "daemon" } })
    H.turn("!echo hi")
    assert.matches("error: cannot start the daemon `/nonexistent/elelem daemon`", H.text())
    assert.are.equal("dead", daemon.state())
    assert.is_false(H.session().busy)
  end)

  it("gives a clear error when it exits at once", function()
    daemon.shutdown()
    H.setup({ cmd = { H.python, "-c", "import sys; sys.exit(3)" } })
    H.turn("!echo hi")
    assert.matches("error: the daemon exited %(code 3%)", H.text())
    assert.are.equal(1, #H.notified("the daemon exited (code 3)"))
  end)
end)
