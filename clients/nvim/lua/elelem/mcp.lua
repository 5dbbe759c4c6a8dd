--- MCP servers (issue 19, protocol.md "MCP servers"): the status of a session's servers,
--- from `session/new` / `session/load`'s `mcp` and every `event/mcp`, as lines for the
--- chat, `:ElelemMcp` and `:checkhealth elelem`.
local M = {}

---@param server table
---@return string
function M.line(server)
  local tools = type(server.tools) == "table" and #server.tools or 0
  local parts = { ("%s (%s, %s): %s"):format(tostring(server.name), tostring(server.source or "?"),
    tostring(server.transport or "stdio"), tostring(server.state or "?")) }
  if server.state == "ready" then
    parts[1] = parts[1] .. (", %d tool%s"):format(tools, tools == 1 and "" or "s")
  end
  if type(server.attempts) == "number" and server.attempts > 1 then
    table.insert(parts, ("%d attempts"):format(server.attempts))
  end
  if type(server.error) == "string" and server.error ~= "" then
    table.insert(parts, "error: " .. server.error)
  end
  if type(server.authorizeUrl) == "string" and server.authorizeUrl ~= "" then
    table.insert(parts, "authorize: " .. server.authorizeUrl)
  end
  return table.concat(parts, " · ")
end

--- Every line of a status: one per server, then its problems.
---@param status table?
---@return string[]
function M.lines(status)
  local lines = {}
  if type(status) ~= "table" then
    return lines
  end
  for _, server in ipairs(type(status.servers) == "table" and status.servers or {}) do
    table.insert(lines, M.line(server))
  end
  for _, problem in ipairs(type(status.problems) == "table" and status.problems or {}) do
    table.insert(lines, "problem: " .. tostring(problem))
  end
  return lines
end

--- The servers whose line changed from `old` to `new` (what the chat announces).
---@param old table?
---@param new table?
---@return string[]
function M.changes(old, new)
  local before = {}
  for _, server in ipairs(type(old) == "table" and type(old.servers) == "table" and old.servers or {}) do
    before[server.name] = M.line(server)
  end
  local out = {}
  for _, server in ipairs(type(new) == "table" and type(new.servers) == "table" and new.servers or {}) do
    local line = M.line(server)
    if before[server.name] ~= line then
      table.insert(out, line)
    end
  end
  return out
end

--- Writes `s`'s server lines that waited for the turn to end (a turn's reply is never cut
--- by a status line).
---@param s elelem.Session
function M.flush(s)
  local later = s.mcp_later or {}
  s.mcp_later = nil
  for _, name in ipairs(later) do
    for _, server in ipairs(type(s.mcp) == "table" and type(s.mcp.servers) == "table" and s.mcp.servers or {}) do
      if server.name == name then
        s.chat:sticky("mcp:" .. name, "MCP " .. M.line(server), M.hl(server))
      end
    end
  end
end

--- Writes every server's line again (the chat was redrawn: a rewind, a resume).
---@param s elelem.Session
function M.redraw(s)
  for _, server in ipairs(type(s.mcp) == "table" and type(s.mcp.servers) == "table" and s.mcp.servers or {}) do
    s.chat:sticky("mcp:" .. tostring(server.name), "MCP " .. M.line(server), M.hl(server))
  end
end

---@param server table
---@return string
function M.hl(server)
  return (server.state == "retrying" or server.state == "failed") and "ElelemError" or "ElelemDim"
end

--- A new MCP status (`result.mcp`, `event/mcp`) of session `self`: each server has one line
--- in its chat, updated in place as its state changes (state, attempts, last error); a new
--- one while a reply streams is written when the turn ends. Each new problem is said once.
---@param self elelem.Session
---@param status table?
function M.update(self, status)
  if type(status) ~= "table" then
    return
  end
  local changed = {}
  for _, line in ipairs(M.changes(self.mcp, status)) do
    changed[line] = true
  end
  self.mcp = status
  for _, server in ipairs(type(status.servers) == "table" and status.servers or {}) do
    local line = M.line(server)
    local key = "mcp:" .. tostring(server.name)
    local shown = self.chat.stickies and self.chat.stickies[key]
    local streaming = self.chat.mode ~= nil or #self.chat.queue > 0 -- a reply is being written
    if changed[line] and (shown or not streaming) then
      self.chat:sticky(key, "MCP " .. line, M.hl(server))
    elseif changed[line] then
      self.mcp_later = self.mcp_later or {}
      if not vim.tbl_contains(self.mcp_later, server.name) then
        table.insert(self.mcp_later, server.name)
      end
    end
  end
  for _, problem in ipairs(type(status.problems) == "table" and status.problems or {}) do
    if not self.mcp_problems or not vim.tbl_contains(self.mcp_problems, problem) then
      self.chat:notice("MCP problem: " .. tostring(problem), "ElelemError")
    end
  end
  self.mcp_problems = type(status.problems) == "table" and status.problems or nil
end

--- `:ElelemMcp`: this tab's session's servers.
function M.show()
  local s = require("elelem.session").current()
  local lines = M.lines(s.mcp)
  if not s.id then
    lines = { "no session yet in this tab (the first prompt starts one)" }
  elseif #lines == 0 then
    lines = { "no MCP servers (setup({ mcpServers = ... }), ~/.config/elelem/mcp.json or the project's .mcp.json)" }
  end
  vim.notify("elelem MCP servers:\n" .. table.concat(lines, "\n"), vim.log.levels.INFO)
  return lines
end

return M
