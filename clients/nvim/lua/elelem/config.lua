--- Options of `require("elelem").setup()`, their defaults and their validation.
local M = {}

---@type elelem.Config
M.defaults = {
  cmd = { "elelem", "daemon" },
  env = nil,
  provider = nil,
  model = nil,
  cwd = nil,
  trust = "ask",
  log_level = "warn",
  chat = { split = "right", size = 0.4, input_height = 5 },
  thinking = { folded = false },
  prestart = false,
  review = {
    keys = {
      accept = "ga", reject = "gr", accept_all = "gA", reject_all = "gR",
      accept_turn = "gT", next = "]h", prev = "[h",
    },
    save = true, -- write a buffer the agent changed if it had no unsaved changes before
  },
  mcpServers = nil,
  editor_state = false,
  questions = "chat", -- "chat": questions and hunks in the chat buffer; "select": vim.ui.select / vim.ui.input
}

---@type elelem.Config
M.options = vim.deepcopy(M.defaults)

local SPLITS = { left = true, right = true, above = true, below = true }
local LEVELS = { debug = true, info = true, warn = true, error = true }

---@param name string
---@param ok boolean
---@param expected string
---@param value any
local function check(name, ok, expected, value)
  if not ok then
    error(("elelem.setup: %s must be %s, got %s"):format(name, expected, vim.inspect(value)), 3)
  end
end

---@param list any
---@return boolean
local function strings(list)
  if type(list) ~= "table" or #list == 0 or not vim.islist(list) then
    return false
  end
  for _, item in ipairs(list) do
    if type(item) ~= "string" then
      return false
    end
  end
  return true
end

---@param o elelem.Config
local function validate(o)
  check("cmd", strings(o.cmd), "a non-empty list of strings", o.cmd)
  check("env", o.env == nil or type(o.env) == "table", "a table of strings", o.env)
  for key, value in pairs(o.env or {}) do
    check("env." .. tostring(key), type(value) == "string", "a string", value)
  end
  check("provider", o.provider == nil or type(o.provider) == "string", "a string", o.provider)
  check("model", o.model == nil or type(o.model) == "string", "a string", o.model)
  local cwd_ok = o.cwd == nil or type(o.cwd) == "string" or type(o.cwd) == "function"
  check("cwd", cwd_ok, "a string or a function", o.cwd)
  check("trust", o.trust == "ask" or type(o.trust) == "boolean", '"ask", true or false', o.trust)
  check("log_level", LEVELS[o.log_level] ~= nil, '"debug", "info", "warn" or "error"', o.log_level)
  check("chat.split", SPLITS[o.chat.split] ~= nil, '"left", "right", "above" or "below"', o.chat.split)
  check("chat.size", type(o.chat.size) == "number" and o.chat.size > 0, "a positive number", o.chat.size)
  local height = o.chat.input_height
  check("chat.input_height", type(height) == "number" and height >= 1, "a number >= 1", height)
  check("thinking.folded", type(o.thinking.folded) == "boolean", "a boolean", o.thinking.folded)
  check("prestart", type(o.prestart) == "boolean", "a boolean", o.prestart)
  check("review.save", type(o.review.save) == "boolean", "a boolean", o.review.save)
  check("review.keys", type(o.review.keys) == "table", "a table", o.review.keys)
  for name, key in pairs(o.review.keys) do
    check("review.keys." .. tostring(name), type(key) == "string", "a string (\"\" for none)", key)
  end
  check("mcpServers", o.mcpServers == nil or type(o.mcpServers) == "table", "a table (a list or a map)", o.mcpServers)
  check("editor_state", type(o.editor_state) == "boolean", "a boolean", o.editor_state)
  check("questions", o.questions == "chat" or o.questions == "select", '"chat" or "select"', o.questions)
end

--- Merges `opts` over the defaults; raises a clear error on a bad option.
---@param opts elelem.Config?
function M.setup(opts)
  check("setup()'s argument", opts == nil or type(opts) == "table", "a table", opts)
  opts = opts or {}
  for _, key in ipairs({ "chat", "thinking", "review" }) do
    check(key, opts[key] == nil or type(opts[key]) == "table", "a table", opts[key])
  end
  local merged = vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), opts)
  merged.cmd = opts.cmd or M.defaults.cmd -- lists replace, never merge by index
  merged.mcpServers = opts.mcpServers -- as given: ACP's list or the files' map
  validate(merged)
  M.options = merged
end

--- The working directory for a new session in the current tab.
---@return string
function M.cwd()
  local cwd = M.options.cwd
  if type(cwd) == "function" then
    return cwd()
  end
  return cwd or vim.fn.getcwd(-1, 0)
end

return M
