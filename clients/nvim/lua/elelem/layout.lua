--- Where a chat shows: a split (side from `setup({chat = {split}})`) holding the chat buffer,
--- the prompt area under it, and a winbar with the session's provider, model and state.
local config = require("elelem.config")

local M = {}

local api = vim.api

---@param buf integer
---@return integer? window of the current tab showing `buf`
function M.find(buf)
  for _, win in ipairs(api.nvim_tabpage_list_wins(0)) do
    if api.nvim_win_get_buf(win) == buf then
      return win
    end
  end
end

---@param win integer
---@param options table<string, any>
local function set(win, options)
  for name, value in pairs(options) do
    api.nvim_set_option_value(name, value, { win = win, scope = "local" })
  end
end

local COMMON = { wrap = true, linebreak = true, number = false, relativenumber = false,
  signcolumn = "no", spell = false, cursorline = false }

---@param buf integer
---@return integer
local function open_chat(buf)
  local o = config.options.chat
  local vertical = o.split == "left" or o.split == "right"
  local total = vertical and vim.o.columns or vim.o.lines
  local size = o.size <= 1 and math.floor(total * o.size) or math.floor(o.size)
  local spec = { split = o.split, win = -1 }
  spec[vertical and "width" or "height"] = math.max(size, vertical and 20 or 6)
  local win = api.nvim_open_win(buf, false, spec)
  set(win, COMMON)
  set(win, {
    foldmethod = "expr",
    foldexpr = "v:lua.require'elelem.thinking'.foldexpr(v:lnum)",
    foldtext = "v:lua.require'elelem.thinking'.foldtext()",
    foldlevel = config.options.thinking.folded and 0 or 99,
    conceallevel = 2,
    concealcursor = "",
    foldenable = true,
    foldminlines = 0,
    smoothscroll = true, -- a paragraph taller than the window scrolls by screen lines: its end shows
    winfixwidth = vertical,
    winfixheight = not vertical,
  })
  return win
end

---@param buf integer
---@param chat_win integer
---@return integer
local function open_input(buf, chat_win)
  local win = api.nvim_open_win(buf, false, { split = "below", win = chat_win, height = config.options.chat.input_height })
  set(win, COMMON)
  set(win, { winfixheight = true, winbar = M.prompt_bar(buf) })
  return win
end

--- The prompt area's winbar: the pending attachments when there are any (always in view,
--- unlike a virtual line above line 1), else the keys.
---@param buf integer
---@return string
function M.prompt_bar(buf)
  local pending = vim.b[buf].elelem_pending
  if type(pending) == "string" and pending ~= "" then
    local shown = pending:gsub("%%", "%%%%")
    return "%#ElelemTitle# attached:%* " .. shown .. " %<%#ElelemDim#(:ElelemAdd! clears)%*"
  end
  return "%#ElelemDim# <CR>/<C-s> send · <C-c> cancel · /<Tab> commands · q close%*%<" -- cut at the end
end

--- Sets the winbar of every window showing the prompt buffer `buf`.
---@param buf integer
function M.prompt_status(buf)
  for _, win in ipairs(vim.fn.win_findbuf(buf)) do
    set(win, { winbar = M.prompt_bar(buf) })
  end
end

--- Shows the chat and its prompt in the current tab (reusing windows already there) and
--- focuses one of them when `focus` says so. Returns both windows.
---@param chat_buf integer
---@param input_buf integer
---@param focus "input"|"chat"|nil
---@return integer chat_win
---@return integer input_win
function M.open(chat_buf, input_buf, focus)
  local chat_win = M.find(chat_buf) or open_chat(chat_buf)
  local input_win = M.find(input_buf) or open_input(input_buf, chat_win)
  if focus then
    api.nvim_set_current_win(focus == "input" and input_win or chat_win)
  end
  return chat_win, input_win
end

--- Closes the chat's windows in the current tab (a last window stays).
---@param bufs integer[]
function M.close(bufs)
  for _, buf in ipairs(bufs) do
    local win = M.find(buf)
    if win then
      pcall(api.nvim_win_close, win, false)
    end
  end
end

--- Sets the winbar of every window showing the chat buffer.
---@param buf integer
---@param text string
function M.status(buf, text)
  local bar = "%#ElelemTitle# elelem %*" .. text:gsub("%%", "%%%%")
  for _, win in ipairs(vim.fn.win_findbuf(buf)) do
    set(win, { winbar = bar })
  end
end

return M
