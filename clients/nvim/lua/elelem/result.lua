--- A tool call's arguments and result, shown in a float: `<CR>` on a `+ name(args)` line of
--- the chat. What is shown is what the daemon sent (`event/doing`, `event/result`), laid out
--- for reading: short values as `key: value`, text of several lines in a fenced block (in
--- the language of a sibling `path`, `diff` for a diff). Nothing is interpreted.
local M = {}

local api = vim.api

---@class elelem.ToolCall
---@field name string
---@field arguments table?
---@field ok boolean? nil while it runs
---@field result table|any

---@param value any
---@return string
local function json(value)
  if type(value) == "table" and next(value) == nil then
    return "{}"
  end
  local ok, text = pcall(vim.json.encode, value)
  return ok and text or vim.inspect(value)
end

---@param text string
---@return string a fence longer than any backtick run in `text`
local function fence(text)
  local longest = 2
  for run in text:gmatch("`+") do
    longest = math.max(longest, #run)
  end
  return ("`"):rep(longest + 1)
end

---@param key string
---@param fields table
---@return string
local function language(key, fields)
  if key == "diff" then
    return "diff"
  end
  local path = fields.path
  if type(path) == "string" and path ~= "" then
    local ok, ft = pcall(vim.filetype.match, { filename = path })
    if ok and ft then
      return ft
    end
  end
  return "text"
end

--- The lines of one object (arguments or result): `key: value` lines, then the blocks.
---@param fields any
---@param skip table<string, boolean>?
---@return string[]
local function section(fields, skip)
  if type(fields) ~= "table" or vim.islist(fields) and next(fields) ~= nil then
    return { json(fields) }
  end
  local keys = vim.tbl_keys(fields)
  table.sort(keys, function(a, b)
    return tostring(a) < tostring(b)
  end)
  local short, blocks = {}, {}
  for _, key in ipairs(keys) do
    local value = fields[key]
    key = tostring(key)
    if skip and skip[key] then
      value = nil
    end
    if type(value) == "string" and value:find("\n") then
      local text = value:gsub("\n$", "")
      local f = fence(text)
      table.insert(blocks, key .. ":")
      table.insert(blocks, f .. language(key, fields))
      vim.list_extend(blocks, vim.split(text, "\n", { plain = true }))
      table.insert(blocks, f)
    elseif value ~= nil then
      local shown = type(value) == "string" and value or json(value)
      table.insert(short, ("%s: %s"):format(key, shown))
    end
  end
  return vim.list_extend(short, blocks)
end

--- The float's lines for a call.
---@param call elelem.ToolCall
---@return string[]
function M.lines(call)
  local lines = { "## Arguments", "" }
  local args = call.arguments
  if type(args) ~= "table" or next(args) == nil then
    table.insert(lines, "(none)")
  else
    vim.list_extend(lines, section(args))
  end
  vim.list_extend(lines, { "", "## Result", "" })
  if call.ok == nil then
    table.insert(lines, "(running…)")
  else
    local result = call.result
    local fields = type(result) == "table" and section(result, { ok = true }) or { json(result) }
    vim.list_extend(lines, #fields > 0 and fields or { "(empty)" })
  end
  return lines
end

---@param call elelem.ToolCall
---@return string
local function title(call)
  local state = call.ok == nil and "running…" or call.ok and "✓" or "✗"
  return (" %s %s "):format(call.name, state)
end

--- Opens the float for `call` by the cursor and focuses it; `q` or `<Esc>` close it.
---@param call elelem.ToolCall
---@return integer win
function M.open(call)
  local lines = M.lines(call)
  local buf = api.nvim_create_buf(false, true)
  api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].filetype = "markdown"
  vim.bo[buf].modifiable = false
  vim.bo[buf].bufhidden = "wipe"
  local widest = 20
  for _, line in ipairs(lines) do
    widest = math.max(widest, vim.fn.strdisplaywidth(line))
  end
  local width = math.max(20, math.min(widest + 1, vim.o.columns - 6))
  local height = math.max(1, math.min(#lines, math.floor(vim.o.lines * 0.6)))
  local win = api.nvim_open_win(buf, true, {
    relative = "cursor",
    row = 1,
    col = 0,
    width = width,
    height = height,
    border = "rounded",
    title = title(call),
    style = "minimal",
  })
  vim.wo[win].wrap = true
  vim.wo[win].conceallevel = 2
  local function close()
    if api.nvim_win_is_valid(win) then
      api.nvim_win_close(win, true)
    end
  end
  for _, lhs in ipairs({ "q", "<Esc>" }) do
    vim.keymap.set("n", lhs, close, { buffer = buf, nowait = true, desc = "elelem: close the result" })
  end
  api.nvim_create_autocmd("WinLeave", { buffer = buf, once = true, callback = close })
  return win
end

return M
