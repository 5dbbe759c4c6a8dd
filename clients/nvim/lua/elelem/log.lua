--- The client's log: `stdpath("log")/elelem.log`, or a handler that tests can swap in.
local M = {}

local LEVELS = { debug = 1, info = 2, warn = 3, error = 4 }

---@type "debug"|"info"|"warn"|"error"
M.level = "warn"

---@type fun(level: string, message: string)?
local handler = nil

local path = vim.fs.joinpath(vim.fn.stdpath("log") --[[@as string]], "elelem.log")
local made = false

--- Where the log file is.
---@return string
function M.path()
  return path
end

--- Sends log lines to `fn` instead of the file (nil restores the file).
---@param fn fun(level: string, message: string)?
function M.set_handler(fn)
  handler = fn
end

---@param level "debug"|"info"|"warn"|"error"
---@param fmt string
---@param ... any
local function write(level, fmt, ...)
  if LEVELS[level] < LEVELS[M.level] then
    return
  end
  local message = select("#", ...) > 0 and fmt:format(...) or fmt
  if handler then
    return handler(level, message)
  end
  if not made then
    made = true
    vim.fn.mkdir(vim.fs.dirname(path), "p")
  end
  local file = io.open(path, "a")
  if file then
    file:write(("%s [%s] %s\n"):format(os.date("%Y-%m-%d %H:%M:%S"), level:upper(), message))
    file:close()
  end
end

---@param fmt string
function M.debug(fmt, ...)
  write("debug", fmt, ...)
end
---@param fmt string
function M.info(fmt, ...)
  write("info", fmt, ...)
end
---@param fmt string
function M.warn(fmt, ...)
  write("warn", fmt, ...)
end
---@param fmt string
function M.error(fmt, ...)
  write("error", fmt, ...)
end

return M
