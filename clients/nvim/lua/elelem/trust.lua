--- Workspace trust for a folder's own plugins, rules, modes, skills and MCP servers (issue 29).
--- What a folder would load is the daemon's to say (`trust.loads` of a `session/new` or
--- `session/load` result): this client lists it, it never works it out itself.
---
--- With `trust = "ask"` (the default) Neovim's own trust database (`:help vim.secure`, the one
--- 'exrc' uses) keeps the answer for the session's directory: a directory allowed there is sent
--- `trusted = true`, a denied one `false` (an entry for its `.agents/plugins`, what older
--- versions asked about, counts too). An unknown one is sent nothing (the daemon's
--- trusted-folders file decides); when the session comes back untrusted with something to
--- load, the user is asked in the chat (or with `vim.ui.select` under `questions = "select"`),
--- the list shown first. "trust" records the directory in vim.secure and calls
--- `session/trust` (the daemon loads it all at once); "never" records it as denied; "not now"
--- keeps it untrusted for this session. Without a UI (headless) nothing is asked and the
--- folder stays untrusted. `trust = true` or `false` decides for every project.
local config = require("elelem.config")

local M = {}

M.ANSWERS = { "trust this folder", "not now", "never (remembered)" }

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

--- The `trusted` value for a session in `cwd`: nil when the user has not decided (the
--- daemon's trusted-folders file decides, and the result may ask, see `M.due`).
---@param cwd string
---@return boolean?
function M.decide(cwd)
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
  return nil
end

--- Whether a session result calls for the trust question: untrusted, something to load, the
--- user undecided, and someone to ask.
---@param result table a `session/new` or `session/load` result
---@return boolean
function M.due(result)
  local t = type(result) == "table" and result.trust or nil
  if type(t) ~= "table" or t.trusted ~= false or type(t.loads) ~= "table" or #t.loads == 0 then
    return false
  end
  if type(t.folder) ~= "string" or #vim.api.nvim_list_uis() == 0 then
    return false
  end
  return config.options.trust == "ask" and M.decide(t.folder) == nil
end

--- The question's text: the folder, then each thing it would load.
---@param t table the result's `trust`
---@return string
function M.prompt(t)
  local lines = { ("Trust %s? Trusting it loads:"):format(t.folder) }
  for _, item in ipairs(t.loads) do
    table.insert(lines, "  " .. tostring(item))
  end
  return table.concat(lines, "\n")
end

--- Records `folder` in vim.secure's database: allowed or denied.
---@param folder string
---@param allow boolean
local function remember(folder, allow)
  if not allow then
    return pcall(vim.secure.trust, { action = "deny", path = folder })
  end
  local buf = vim.api.nvim_create_buf(false, true) -- vim.secure allows a buffer's name only
  pcall(function()
    vim.api.nvim_buf_set_name(buf, folder)
    vim.secure.trust({ action = "allow", bufnr = buf })
  end)
  pcall(vim.api.nvim_buf_delete, buf, { force = true })
end

--- Asks the trust question of session `s` (its result's `trust`), then `done()`. On "trust"
--- the folder is trusted (`session/trust`) and `s` adopts the answer before `done`.
---@param s table the session
---@param done fun()
function M.ask(s, done)
  local t, id = s.info.trust, s.id
  local params = { sessionId = s.id, kind = "trust", prompt = M.prompt(t), options = M.ANSWERS }
  require("elelem.ask").show(params, function(answer)
    if s.id ~= id then
      return done() -- the session was replaced meanwhile: the answer is about nothing now
    end
    s.chat:notice(("? Trust %s → %s"):format(t.folder, answer or "(no answer)"))
    if answer == M.ANSWERS[3] then
      remember(t.folder, false)
    end
    if answer ~= M.ANSWERS[1] then
      s.chat:notice("(the folder stays untrusted: none of it was loaded)")
      return done()
    end
    remember(t.folder, true)
    require("elelem.daemon").request("session/trust", { sessionId = s.id }, function(err, result)
      if err then
        s.chat:notice("error: " .. require("elelem.errors").message(err), "ElelemError")
      elseif s.id == id then
        s:adopt(result)
        s.chat:notice("(trusted: what is listed above is loaded)")
      end
      done()
    end)
  end)
end

return M
