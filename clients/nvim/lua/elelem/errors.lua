--- The daemon's JSON-RPC error codes (protocol.md "Errors") and how the client words them.
--- `daemon_exited` is the client's own: every request pending when the daemon died gets it.
local M = {}

M.codes = {
  parse_error = -32700,
  invalid_request = -32600,
  method_not_found = -32601,
  invalid_params = -32602, -- also unknown_session (no open session), unknown_provider
  internal_error = -32603,
  session_busy = -32001,
  unknown_session = -32002, -- no stored session (session/load, session/delete); else -32602
  session_locked = -32003,
  not_running = -32006, -- session/steer with no turn running: send a session/turn
  request_cancelled = -32800,
  daemon_exited = -32099,
}

---@class elelem.Error
---@field code integer
---@field message string
---@field data? {kind?: string}

--- The `data.kind` of an error, or a kind guessed from its code.
---@param err elelem.Error
---@return string
function M.kind(err)
  if type(err.data) == "table" and err.data.kind then
    return err.data.kind
  end
  for kind, code in pairs(M.codes) do
    if code == err.code and kind ~= "invalid_params" then
      return kind
    end
  end
  return err.code == M.codes.invalid_params and "invalid_params" or "error"
end

--- One line for the user.
---@param err elelem.Error|string
---@return string
function M.message(err)
  if type(err) ~= "table" then
    return tostring(err)
  end
  return ("%s (%s)"):format(err.message or "error", M.kind(err))
end

--- The error given to requests still pending when the daemon process ended.
---@param code integer?
---@param signal integer?
---@return elelem.Error
function M.exited(code, signal)
  local message = "the daemon is not running"
  if signal and signal ~= 0 then
    message = ("the daemon exited (signal %d)"):format(signal)
  elseif code then
    message = ("the daemon exited (code %d)"):format(code)
  end
  return { code = M.codes.daemon_exited, message = message, data = { kind = "daemon_exited" } }
end

return M
