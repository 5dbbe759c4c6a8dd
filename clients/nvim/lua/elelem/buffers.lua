--- The editor's side of a file: the loaded buffer of a path, its whole text as the disk
--- would hold it (unsaved changes included), and a change of that text as one undo step.
local M = {}

local api = vim.api

--- The resolved absolute form of `name` (symlinks followed when it exists).
---@param name string
---@return string
local function resolved(name)
  local full = vim.fn.fnamemodify(name, ":p")
  return vim.uv.fs_realpath(full) or vim.fs.normalize(full)
end
M.resolved = resolved

--- Names a scratch buffer `name` (or `name-N` when another buffer has that name): a buffer
--- left unnamed would be taken over by the next `:edit` in its window.
---@param buf integer
---@param name string
function M.name(buf, name)
  if not pcall(api.nvim_buf_set_name, buf, name) then
    pcall(api.nvim_buf_set_name, buf, ("%s-%d"):format(name, buf))
  end
end

--- `path` relative to the session folder (`config.cwd()`) when inside it, else with `~`.
---@param path string
---@return string
function M.shown(path)
  local cwd = resolved(require("elelem.config").cwd())
  local prefix = cwd:sub(-1) == "/" and cwd or cwd .. "/"
  if vim.startswith(path, prefix) then
    return path:sub(#prefix + 1)
  end
  return vim.fn.fnamemodify(path, ":~")
end

--- The loaded file buffer of `path` (an absolute path), if any.
---@param path string
---@return integer?
function M.find(path)
  if type(path) ~= "string" or path == "" then
    return nil
  end
  local want = resolved(path)
  for _, buf in ipairs(api.nvim_list_bufs()) do
    if api.nvim_buf_is_loaded(buf) and vim.bo[buf].buftype == "" then
      local name = api.nvim_buf_get_name(buf)
      if name ~= "" and (name == path or resolved(name) == want) then
        return buf
      end
    end
  end
  return nil
end

---@param buf integer
---@return string
local function newline(buf)
  return vim.bo[buf].fileformat == "dos" and "\r\n" or "\n"
end

--- The buffer's whole text, line ends as 'fileformat' says, the last one as 'eol' says: an
--- unchanged buffer gives the file's bytes ('fixeol' adds a last newline only on :write).
---@param buf integer
---@return string
function M.text(buf)
  local lines = api.nvim_buf_get_lines(buf, 0, -1, false)
  if #lines == 1 and lines[1] == "" and api.nvim_buf_line_count(buf) == 1 then
    return "" -- an empty buffer writes an empty file
  end
  local nl = newline(buf)
  local eol = vim.bo[buf].eol
  return table.concat(lines, nl) .. (eol and nl or "")
end

---@param buf integer
---@return integer
function M.version(buf)
  return api.nvim_buf_get_changedtick(buf)
end

--- `text` as buffer lines, and whether it ends with a newline.
---@param buf integer
---@param text string
---@return string[] lines
---@return boolean eol
local function lines_of(buf, text)
  local nl = newline(buf)
  local eol = text ~= "" and text:sub(-#nl) == nl
  if eol then
    text = text:sub(1, -#nl - 1)
  end
  if text == "" and not eol then
    return { "" }, vim.bo[buf].eol
  end
  return vim.split(text, nl, { plain = true }), eol
end

--- Replaces the buffer's text by `text` in one change (one undo step): only the lines
--- that differ are set, so marks, folds and the view elsewhere stay.
---@param buf integer
---@param text string
function M.set(buf, text)
  local new, eol = lines_of(buf, text)
  local old = api.nvim_buf_get_lines(buf, 0, -1, false)
  local first = 1
  while first <= #old and first <= #new and old[first] == new[first] do
    first = first + 1
  end
  local last_old, last_new = #old, #new
  while last_old >= first and last_new >= first and old[last_old] == new[last_new] do
    last_old, last_new = last_old - 1, last_new - 1
  end
  if first <= last_old or first <= last_new then
    local modifiable = vim.bo[buf].modifiable
    vim.bo[buf].modifiable = true
    -- setting 'undolevels' closes the undo block (`:help undo-break`): the change is its own
    -- step, not joined to an edit of the user's made just before through the API
    vim.bo[buf].undolevels = vim.bo[buf].undolevels
    api.nvim_buf_set_lines(buf, first - 1, last_old, false, vim.list_slice(new, first, last_new))
    vim.bo[buf].undolevels = vim.bo[buf].undolevels
    vim.bo[buf].modifiable = modifiable
  end
  if not eol and vim.bo[buf].fixeol then
    vim.bo[buf].fixeol = false -- the text ends without a newline: keep it so on :write
  end
  vim.bo[buf].eol = eol
end

--- protocol.md: a line is text up to and including a "\n"; the last may lack it.
---@param text string
---@return string[]
local function split_keep(text)
  local out, start = {}, 1
  while start <= #text do
    local stop = text:find("\n", start, true) or #text
    table.insert(out, text:sub(start, stop))
    start = stop + 1
  end
  return out
end

--- protocol.md's recipe: `oldText` with the hunks `ids` of `newText` applied, last first.
---@param old string?
---@param new string
---@param hunks table[]
---@param ids integer[]
---@return string
function M.apply_hunks(old, new, hunks, ids)
  local a, b = split_keep(old or ""), split_keep(new)
  local chosen = {}
  for _, hunk in ipairs(hunks) do
    if vim.tbl_contains(ids, hunk.id) then
      table.insert(chosen, hunk)
    end
  end
  table.sort(chosen, function(x, y)
    return x.oldStart > y.oldStart
  end)
  for _, hunk in ipairs(chosen) do
    local at = hunk.oldLines == 0 and hunk.oldStart or hunk.oldStart - 1
    local replacement = vim.list_slice(b, hunk.newStart, hunk.newStart + hunk.newLines - 1)
    local out = vim.list_slice(a, 1, at)
    vim.list_extend(out, replacement)
    vim.list_extend(out, a, at + hunk.oldLines + 1, #a)
    a = out
  end
  return table.concat(a)
end

return M
