--- Stored sessions (protocol.md "Stored sessions", draft): resume the most recent one of
--- this directory, or pick one. Loading replaces the tab's session and redraws its history.
local config = require("elelem.config")
local daemon = require("elelem.daemon")
local errors = require("elelem.errors")
local session = require("elelem.session")
local trust = require("elelem.trust")

local M = {}

---@param message string
---@param level integer?
local function notify(message, level)
  vim.notify("elelem: " .. message, level or vim.log.levels.INFO)
end

--- Stored sessions that are not open in this daemon (open ones belong to a tab already),
--- most recently updated first, as the daemon sends them.
---@param params table
---@param cb fun(entries: table[])
local function stored(params, cb)
  daemon.request("session/list", params, function(err, result)
    if err then
      return notify("cannot list sessions: " .. errors.message(err), vim.log.levels.ERROR)
    end
    local entries = {}
    for _, entry in ipairs(result.sessions or {}) do
      if entry.stored and not entry.open then
        table.insert(entries, entry)
      end
    end
    cb(entries)
  end)
end

local MAX_PAGES = 10000 -- pages of history fetched at most (a bound on a hostile answer)

--- `result` (a `session/load` answer, which carries the newest page of the history) with
--- every older page put before it, asked for with `session/history` until no cursor is left.
---@param result table
---@param cb fun(result: table)
function M.pages(result, cb)
  local pages, n = {}, 0
  local function step(cursor)
    if type(cursor) ~= "string" or type(result.history) ~= "table" or n >= MAX_PAGES then
      local whole = {}
      for i = #pages, 1, -1 do
        vim.list_extend(whole, pages[i])
      end
      vim.list_extend(whole, result.history or {})
      result.history = result.history and whole or nil
      return cb(result)
    end
    n = n + 1
    daemon.request("session/history", { sessionId = result.sessionId, cursor = cursor }, function(err, page)
      if err or type(page) ~= "table" then
        notify("some of the history could not be read: " .. errors.message(err), vim.log.levels.WARN)
        return step(nil)
      end
      table.insert(pages, type(page.history) == "table" and page.history or {})
      step(page.cursor)
    end)
  end
  step(result.historyCursor)
end

--- Loads a stored session into the current tab.
---@param entry {sessionId: string, title: string?}
function M.load(entry)
  local s = session.current()
  if s.busy then
    return notify("a turn is running; wait for it or :ElelemCancel", vim.log.levels.WARN)
  end
  local params = { sessionId = entry.sessionId, mcpServers = config.options.mcpServers }
  if entry.cwd then
    params.trusted = trust.decide(entry.cwd)
  end
  daemon.request("session/load", params, function(err, loaded)
    if err then
      return notify("cannot load the session: " .. errors.message(err), vim.log.levels.ERROR)
    end
    M.pages(loaded, function(result)
    s:reset()
    s:adopt(result)
    s:show("input")
    local drawn = s.chat:history(result.history or result.messages or {})
    if not drawn and type(result.plan) == "table" and type(result.plan.entries) == "table" then
      s.chat:plan(result.plan.entries) -- the last stored plan
    end
    s.chat:notice(("(resumed: %s)"):format(result.title or entry.title or entry.sessionId))
    s.chat:follow() -- at the end, where the conversation goes on
    s:refresh()
    s.trust_due = trust.due(result)
    s:ensure(function() end) -- the trust question, if one is due (elelem.trust)
    end)
  end)
end

--- Resumes the most recent stored session of this directory.
function M.resume()
  local cwd = config.cwd()
  stored({ cwd = cwd }, function(entries)
    if #entries == 0 then
      return notify("no stored session for " .. cwd)
    end
    M.load(entries[1])
  end)
end

---@param entry table
---@return string
function M.format(entry)
  local when = tostring(entry.updatedAt or ""):gsub("T", " "):gsub("%.%d+", ""):gsub("Z$", "")
  return ("%s  %s  %s"):format(when, entry.title or "(untitled)", vim.fn.fnamemodify(entry.cwd or "", ":~"))
end

--- Lets the user pick a stored session with `vim.ui.select`.
function M.pick()
  stored(vim.empty_dict(), function(entries)
    if #entries == 0 then
      return notify("no stored sessions")
    end
    vim.ui.select(entries, { prompt = "elelem sessions", format_item = M.format, kind = "elelem.sessions" }, function(entry)
      if entry then
        M.load(entry)
      end
    end)
  end)
end

return M
