--- `:checkhealth elelem`: starts a separate daemon with the configured command, reports its
--- version and providers, opens a session with the configured provider, and stops it.
--- (checkhealth is synchronous by nature, so this is the one place that waits.)
local config = require("elelem.config")
local daemon = require("elelem.daemon")
local errors = require("elelem.errors")
local log = require("elelem.log")

local M = {}

local TIMEOUT = 20000

--- A throwaway daemon: `call(method, params)` waits for the answer.
---@param o elelem.Config
---@return table? probe
---@return string? error
local function spawn(o)
  local probe = { exited = false }
  local ok, rpc = pcall(vim.lsp.rpc.start, o.cmd, {
    on_exit = function(code, signal)
      probe.exited, probe.code, probe.signal = true, code, signal
    end,
  }, { env = o.env })
  if not ok then
    return nil, tostring(rpc)
  end
  probe.rpc = rpc
  ---@return any result
  ---@return string? error
  function probe.call(method, params)
    local done, answer, failure = false, nil, nil
    local sent = rpc.request(method, params, function(err, result)
      done, answer, failure = true, result, err and errors.message(err)
    end)
    if not sent then
      return nil, "the daemon is not running"
    end
    vim.wait(TIMEOUT, function()
      return done or probe.exited
    end, 20)
    if done then
      return answer, failure
    elseif probe.exited then
      return nil, errors.exited(probe.code, probe.signal).message
    end
    return nil, ("no answer to %s within %d s"):format(method, TIMEOUT / 1000)
  end
  function probe.stop()
    if not probe.exited then
      probe.call("shutdown", nil)
      rpc.notify("exit", nil)
      if not vim.wait(3000, function()
        return probe.exited
      end, 20) then
        rpc.terminate()
      end
    end
  end
  return probe
end

function M.check()
  local health = vim.health
  health.start("elelem")
  if vim.fn.has("nvim-0.10") == 1 then
    health.ok("Neovim " .. tostring(vim.version()))
  else
    health.error("Neovim 0.10 or later is needed")
  end
  local o = config.options
  local cmd = table.concat(o.cmd, " ")
  if vim.fn.executable(o.cmd[1]) == 0 then
    return health.error(("`%s` is not executable (daemon command: %s)"):format(o.cmd[1], cmd), {
      "Install the daemon: pip install elelem-daemon (it provides `elelem daemon`)",
      'Or point setup() at it: require("elelem").setup({ cmd = { "/path/to/python", "-m", "elelem_daemon" } })',
    })
  end
  local probe, err = spawn(o)
  if not probe then
    return health.error("the daemon does not start: " .. tostring(err))
  end
  local info, failure = probe.call("initialize", {
    processId = vim.fn.getpid(),
    clientInfo = { name = "elelem.nvim checkhealth", version = daemon.version },
    capabilities = vim.empty_dict(),
  })
  if failure or type(info) ~= "table" then
    probe.stop()
    return health.error(("the daemon (%s) does not answer initialize: %s"):format(cmd, failure or "no result"))
  end
  local server = info.serverInfo or {}
  health.ok(("daemon starts: %s %s (%s)"):format(server.name or "?", server.version or "?", cmd))
  local providers = (info.capabilities or {}).providers or {}
  health.info("providers: " .. (#providers > 0 and table.concat(providers, ", ") or "(none)"))
  local opened, open_err = probe.call("session/new", {
    cwd = config.cwd(), provider = o.provider, model = o.model, trusted = false })
  if open_err or type(opened) ~= "table" then
    health.error("a session does not open: " .. tostring(open_err), {
      "Check setup({ provider = ..., model = ... }) and the provider's environment (API keys, hosts)" })
  else
    local served = type(opened.servedModel) == "string" and opened.servedModel ~= opened.model
      and (" (the server answers with %s)"):format(opened.servedModel) or ""
    health.ok(("a session opens: provider %s, model %s%s, %d tools, %d commands"):format(
      opened.provider, opened.model, served, #(opened.tools or {}), #(opened.commands or {})))
  end
  probe.stop()
  health.info("this Neovim's daemon: " .. daemon.state())
  local mcp = {} -- every tab's session (checkhealth opens its own tab)
  for _, s in pairs(require("elelem.session").sessions) do
    if s.id then
      -- the model that answers, once the server said (the probe's fresh session cannot know)
      local asked, shown = (s.info or {}).model, s:model()
      health.info(("an open session: provider %s, model %s%s"):format(tostring((s.info or {}).provider),
        tostring(shown), asked and shown ~= asked and (" (asked for %s)"):format(asked) or ""))
      vim.list_extend(mcp, require("elelem.mcp").lines(s.mcp))
    end
  end
  if o.mcpServers then
    health.info("setup({ mcpServers }) passes them on session/new and session/load")
  end
  if #mcp == 0 then
    health.info("MCP servers of the open sessions: none")
  end
  for _, line in ipairs(mcp) do
    local report = (line:find(": ready", 1, true) and health.ok) or (line:find(": starting", 1, true) and health.info)
      or health.warn
    report("MCP " .. line)
  end
  health.info("client log: " .. log.path() .. " (level " .. o.log_level .. ")")
  health.info("daemon stderr: " .. vim.lsp.get_log_path())
end

return M
