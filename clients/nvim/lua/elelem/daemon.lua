--- The daemon process: started lazily with `vim.lsp.rpc.start`, initialized once, reported
--- once when it dies and started again by the next request.
---
--- Requests made before `initialize` has answered wait in a queue. Every callback runs in
--- the main loop (never in a fast event), and each is called exactly once: with the result,
--- with the daemon's error, or with `errors.exited()` when the process ends first.
local config = require("elelem.config")
local errors = require("elelem.errors")
local log = require("elelem.log")

local M = {}

M.version = "0.1.0"

--- What the rest of the plugin hooks in (set by `elelem.init`).
M.handlers = {
  ---@type fun(method: string, params: table)
  notification = function() end,
  --- Server-to-client requests by method; each runs inside a coroutine and may yield.
  ---@type table<string, fun(params: table): any>
  request = {},
  --- The daemon is gone, or going (`expected`: stopped on purpose): forget its sessions.
  ---@type fun(expected: boolean)
  exit = function() end,
  --- `$/cancelRequest {id}`: the daemon withdrew its request `id`.
  ---@type fun(id: any)
  cancel = function() end,
}

---@alias elelem.Callback fun(err: elelem.Error?, result: any)

local S = {
  ---@type vim.lsp.rpc.PublicClient?
  rpc = nil,
  ---@type "stopped"|"starting"|"ready"|"stopping"|"dead"
  state = "stopped",
  ---@type table? the initialize result
  info = nil,
  ---@type {method: string, params: table?, cb: elelem.Callback?}[]
  queue = {},
  ---@type table<table, elelem.Callback>
  pending = {},
  generation = 0,
  stopping = false,
  exited_generation = 0, -- set from the fast exit callback, for `shutdown()`'s wait
  handled_generation = 0, -- the last exit handled in the loop
  ---@type {code: integer, signal: integer}?
  last_exit = nil,
}

--- "stopped", "starting", "ready", "stopping" (requests wait for the next daemon) or "dead"
--- (exited unexpectedly; restarts on demand).
---@return string
function M.state()
  return S.state
end

--- The `initialize` result of the running daemon, if any.
---@return table?
function M.info()
  return S.info
end

---@return {code: integer, signal: integer}?
function M.last_exit()
  return S.last_exit
end

---@param cb elelem.Callback?
---@return elelem.Callback
local function once(cb)
  local called = false
  return function(err, result)
    if called or not cb then
      return
    end
    called = true
    cb(err, result)
  end
end

---@param err elelem.Error
local function fail_all(err)
  local pending, queue = S.pending, S.queue
  S.pending, S.queue = {}, {}
  for _, cb in pairs(pending) do
    cb(err, nil)
  end
  for _, item in ipairs(queue) do
    if item.cb then
      item.cb(err, nil)
    end
  end
end

---@param method string
---@param params table?
---@param cb elelem.Callback
local function send(method, params, cb)
  local key = {}
  local ok = S.rpc
    and S.rpc.request(method, params or vim.empty_dict(), function(err, result)
      S.pending[key] = nil
      cb(err, result)
    end)
  if not ok then
    return cb(errors.exited(), nil)
  end
  S.pending[key] = cb
end

local function flush()
  local queue = S.queue
  S.queue = {}
  for _, item in ipairs(queue) do
    if item.cb then
      send(item.method, item.params, item.cb)
    elseif S.rpc then
      S.rpc.notify(item.method, item.params)
    end
  end
end

---@param gen integer
---@param code integer
---@param signal integer
local function on_exit(gen, code, signal)
  if gen ~= S.generation or S.handled_generation >= gen then
    return
  end
  S.handled_generation = gen
  local expected = S.stopping
  S.rpc, S.info, S.stopping = nil, nil, false
  S.state = expected and "stopped" or "dead"
  S.last_exit = { code = code, signal = signal }
  local err = errors.exited(code, signal)
  if expected then -- what waited for the stop goes to the next daemon
    local queue = S.queue
    S.queue = {}
    fail_all(err)
    S.queue = queue
  else
    fail_all(err)
  end
  if not expected then
    log.warn("daemon: %s", err.message)
    vim.notify(("elelem: %s. It restarts on the next command."):format(err.message), vim.log.levels.WARN)
  end
  M.handlers.exit(expected)
  if #S.queue > 0 then
    M.start()
  end
end

---@param gen integer
---@param fn function
local function in_loop(gen, fn)
  return function(...)
    if gen ~= S.generation then
      return
    end
    if vim.in_fast_event() then
      local args = vim.F.pack_len(...)
      vim.schedule(function()
        fn(vim.F.unpack_len(args))
      end)
    else
      fn(...)
    end
  end
end

--- The ids of the daemon's requests that can be withdrawn, by method, in arrival order:
--- `vim.lsp.rpc` gives a request handler no id, so `watch` notes them as they are read, and
--- each handler takes the first of its method (handlers start in arrival order).
---@type table<string, any[]>
local incoming = {}
local CANCELLABLE = { ["files/propose"] = true, ["input/ask"] = true }

--- Notes the id of each cancellable request the daemon sends, before `vim.lsp.rpc` handles it.
--- Without access to its reader (another Neovim), requests are withdrawn at the turn's end only.
---@param rpc table the public client
local function watch(rpc)
  local client
  for i = 1, 10 do
    local name, value = debug.getupvalue(rpc.request, i)
    if name == nil then
      break
    elseif name == "client" and type(value) == "table" then
      client = value
    end
  end
  local handle = client and client.handle_body
  if type(handle) ~= "function" then
    log.debug("rpc: request ids are not visible; $/cancelRequest closes nothing")
    return
  end
  client.handle_body = function(self, body)
    if body:find('"files/propose"', 1, true) or body:find('"input/ask"', 1, true) then
      local ok, decoded = pcall(vim.json.decode, body, { luanil = { object = true } })
      if ok and type(decoded) == "table" and decoded.id ~= nil and CANCELLABLE[decoded.method] then
        incoming[decoded.method] = incoming[decoded.method] or {}
        table.insert(incoming[decoded.method], decoded.id)
      end
    end
    return handle(self, body)
  end
end

---@param method string
---@param params table
---@return any result
---@return table? err
local function serve(method, params)
  local id
  if CANCELLABLE[method] and incoming[method] and #incoming[method] > 0 then
    id = table.remove(incoming[method], 1)
  end
  local handler = M.handlers.request[method]
  if not handler then
    log.warn("daemon asked for unknown method %s", method)
    return nil, vim.lsp.rpc.rpc_response_error(errors.codes.method_not_found, "unknown method: " .. method)
  end
  return handler(params, id) -- errors become an internal_error answer and an on_error log line
end

--- What the client declares in `initialize` (protocol.md, "Client capabilities").
---@return table
function M.capabilities()
  return {
    input = { ask = true },
    files = { read = true, apply = true, review = true },
    fs = { readTextFile = true, writeTextFile = true },
    editorState = true, -- it may send them; it does with setup({ editor_state = true })
  }
end

--- Starts the daemon if it is not running. Returns false and a message when it cannot.
---@return boolean ok
---@return string? message
function M.start()
  if S.rpc then
    return true
  end
  S.generation = S.generation + 1
  local gen = S.generation
  local o = config.options
  log.info("starting daemon: %s", table.concat(o.cmd, " "))
  local ok, rpc = pcall(vim.lsp.rpc.start, o.cmd, {
    notification = in_loop(gen, function(method, params)
      if method == "$/cancelRequest" then
        return M.handlers.cancel(type(params) == "table" and params.id or nil)
      end
      M.handlers.notification(method, params)
    end),
    server_request = serve,
    on_exit = function(code, signal)
      S.exited_generation = math.max(S.exited_generation, gen)
      S.exit_status = { code = code, signal = signal }
      vim.schedule(function()
        on_exit(gen, code, signal)
      end)
    end,
    on_error = in_loop(gen, function(code, err)
      log.warn("rpc error %s: %s", vim.lsp.rpc.client_errors[code] or code, vim.inspect(err))
    end),
  }, { env = o.env })
  if not ok then
    S.state = "dead"
    local message = ("cannot start the daemon `%s`: %s"):format(table.concat(o.cmd, " "), rpc)
    log.error(message)
    fail_all({ code = errors.codes.daemon_exited, message = message, data = { kind = "daemon_exited" } })
    return false, message
  end
  S.rpc, S.state = rpc, "starting"
  incoming = {}
  pcall(watch, rpc)
  rpc.request("initialize", {
    processId = vim.fn.getpid(),
    clientInfo = { name = "elelem.nvim", version = M.version },
    capabilities = M.capabilities(),
  }, function(err, result)
    if gen ~= S.generation then
      return
    end
    if err then
      log.error("initialize failed: %s", errors.message(err))
      vim.notify("elelem: the daemon refused initialize: " .. errors.message(err), vim.log.levels.ERROR)
      fail_all(err)
      return M.stop()
    end
    S.info, S.state = result, "ready"
    log.info("daemon ready: %s", vim.inspect(result.serverInfo))
    flush()
  end)
  return true
end

--- Sends a request, starting the daemon first if needed. `cb` runs exactly once.
---@param method string
---@param params table?
---@param cb elelem.Callback?
function M.request(method, params, cb)
  cb = once(cb)
  if S.state == "ready" then
    return send(method, params, cb)
  end
  table.insert(S.queue, { method = method, params = params, cb = cb })
  if not S.rpc then
    M.start()
  end
end

--- Sends a notification if the daemon is running (queued while it initializes).
---@param method string
---@param params table?
function M.notify(method, params)
  if S.state == "ready" and S.rpc then
    S.rpc.notify(method, params or vim.empty_dict())
  elseif S.state == "starting" then
    table.insert(S.queue, { method = method, params = params })
  end
end

--- Stops the daemon politely (`shutdown`, then `exit`), without waiting.
function M.stop()
  local rpc = S.rpc
  if not rpc then
    return
  end
  S.stopping, S.state = true, "stopping"
  M.handlers.exit(true) -- its sessions are gone for what comes next
  local ok = rpc.request("shutdown", nil, function()
    rpc.notify("exit", nil)
  end)
  if not ok then
    rpc.terminate()
  end
  local gen = S.generation
  vim.defer_fn(function()
    if S.rpc == rpc and S.generation == gen then
      rpc.terminate()
    end
  end, 3000)
end

--- Stops the daemon and waits for it (at most `timeout` ms): for `VimLeavePre` only, where
--- nothing else runs after us. Returns whether the process ended in time.
---@param timeout integer?
---@return boolean
function M.shutdown(timeout)
  local rpc, gen = S.rpc, S.generation
  if not rpc then
    return true
  end
  timeout = timeout or 1500
  S.stopping = true
  local answered = false
  rpc.request("shutdown", nil, function()
    answered = true
  end)
  vim.wait(timeout, function()
    return answered
  end, 10)
  rpc.notify("exit", nil)
  local ended = vim.wait(timeout, function()
    return S.exited_generation >= gen
  end, 10)
  if not ended then
    rpc.terminate()
  else
    on_exit(gen, S.exit_status.code, S.exit_status.signal) -- now, not after we return
  end
  return ended
end

return M
