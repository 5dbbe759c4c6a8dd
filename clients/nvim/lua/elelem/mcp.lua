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

--- A new MCP status (`result.mcp`, `event/mcp`) of session `self`: each server whose state
--- changed gets a line in its chat, and so does each new problem.
---@param self elelem.Session
---@param status table?
function M.update(self, status)
  if type(status) ~= "table" then
    return
  end
  local changed = M.changes(self.mcp, status)
  self.mcp = status
  for _, line in ipairs(changed) do
    self.chat:notice("MCP " .. line)
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
