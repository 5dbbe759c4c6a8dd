--- Workspace trust for a folder's own plugins, rules and MCP servers. A session's `trusted` flag
--- matters only when its directory has something the daemon loads only when trusted:
--- `.agents/plugins` (Python files), `.agents/permissions`, `.agents/modes` or `.mcp.json`
--- (servers it starts). Without any of them nothing is sent (the daemon's trusted-folders file
--- decides, and there is nothing to load).
---
--- With `trust = "ask"` (the default) the decision is Neovim's own trust database
--- (`:help vim.secure`, the one 'exrc' uses), for the session's directory: a directory already
--- allowed is trusted, a denied one is not, and an unknown one is asked about once with
--- `vim.secure.read()` (the answer is remembered). An entry for its `.agents/plugins` (what
--- older versions asked about) counts too. Without a UI (headless) nothing is asked and the
--- folder stays untrusted. `trust = true` or `false` decides for every project.
local config = require("elelem.config")

local M = {}

---@return table<string, string> path -> hash ("directory" for an allowed directory, "!" denied)
local function database()
  local entries = {}
  local file = io.open(vim.fs.joinpath(vim.fn.stdpath("state") --[[@as string]], "trust"), "r")
  if not file then
    return entries
  end
  for line in file:lines() do
    local hash, path = line:match("^(%S+) (.+)$")
    if hash then
      entries[path] = hash
    end
  end
  file:close()
  return entries
end

M.TRUSTABLE = { ".agents/plugins", ".agents/permissions", ".agents/modes", ".mcp.json" }

--- Whether `cwd` holds anything only trust loads.
---@param cwd string
---@return boolean
local function has_trustable(cwd)
  for _, name in ipairs(M.TRUSTABLE) do
    if vim.uv.fs_stat(vim.fs.joinpath(cwd, name)) then
      return true
    end
  end
  return false
end

--- The `trusted` value for a session in `cwd`: nil when there is nothing to trust.
---@param cwd string
---@return boolean?
function M.decide(cwd)
  if not has_trustable(cwd) then
    return nil
  end
  local mode = config.options.trust
  if type(mode) == "boolean" then
    return mode
  end
  local folder = vim.uv.fs_realpath(cwd) or cwd
  local plugins = vim.fs.joinpath(folder, ".agents", "plugins")
  local entries = database()
  local known = entries[folder] or entries[vim.uv.fs_realpath(plugins) or plugins]
  if known == "!" then
    return false
  elseif known == "directory" then
    return true
  end
  if #vim.api.nvim_list_uis() == 0 then
    return false
  end
  local ok, allowed = pcall(vim.secure.read, folder)
  return ok and allowed == true
end

return M
