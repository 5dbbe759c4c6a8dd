--- Which rows of a chat buffer are thinking, for the chat windows' folds.
local M = {}

local api = vim.api

---@type table<integer, table<integer, true>> buffer -> set of 0-based thinking rows
local rows = {}

--- Starts (or restarts) tracking `buf`.
---@param buf integer
function M.track(buf)
  if not rows[buf] then
    api.nvim_create_autocmd("BufWipeout", {
      buffer = buf,
      callback = function()
        rows[buf] = nil
      end,
    })
  end
  rows[buf] = {}
end

--- Marks rows `first`..`last` (0-based) as thinking.
---@param buf integer
---@param first integer
---@param last integer
function M.mark(buf, first, last)
  local set = rows[buf]
  for row = first, last do
    set[row] = true
  end
end

--- 'foldexpr' of chat windows: thinking blocks fold.
---@param lnum integer
---@return string
function M.foldexpr(lnum)
  local set = rows[api.nvim_get_current_buf()]
  return (set and set[lnum - 1]) and "1" or "0"
end

--- 'foldtext' of chat windows.
---@return string
function M.foldtext()
  local first = api.nvim_buf_get_lines(0, vim.v.foldstart - 1, vim.v.foldstart, false)[1] or ""
  local count = vim.v.foldend - vim.v.foldstart + 1
  return ("▸ thinking (%d line%s): %s"):format(count, count == 1 and "" or "s", first)
end

return M
