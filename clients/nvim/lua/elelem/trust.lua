--- Workspace trust for project plugins. A session's `trusted` flag matters only when its
--- directory has `.agents/plugins` (the daemon loads those Python files into the session).
---
--- With `trust = "ask"` (the default) the decision is Neovim's own trust database
--- (`:help vim.secure`, the one 'exrc' uses): a directory already allowed is trusted, a denied
--- one is not, and an unknown one is asked about once with `vim.secure.read()` (the answer is
--- remembered). Without a UI (headless) nothing is asked and the plugins stay off.
--- `trust = true` or `false` decides for every project.
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

--- The `trusted` value for a session in `cwd`: nil when there are no project plugins.
---@param cwd string
---@return boolean?
function M.decide(cwd)
  local dir = vim.fs.joinpath(cwd, ".agents", "plugins")
  if vim.fn.isdirectory(dir) == 0 then
    return nil
  end
  local mode = config.options.trust
  if type(mode) == "boolean" then
    return mode
  end
  local real = vim.uv.fs_realpath(dir) or dir
  local known = database()[real]
  if known == "!" then
    return false
  elseif known == "directory" then
    return true
  end
  if #vim.api.nvim_list_uis() == 0 then
    return false
  end
  local ok, allowed = pcall(vim.secure.read, real)
  return ok and allowed == true
end

return M
