--- The prompt area under a chat: a small Markdown buffer. `<CR>` (normal mode) or `<C-s>`
--- (both modes) sends it. `<Tab>` completes: in a `/` line the command name (also
--- `<C-x><C-o>`) from the session's commands, then its argument from `session/complete`;
--- elsewhere the word before the cursor as a file name under the session's directory.
local M = {}

local api = vim.api

--- Returns the command names (without slash) for the session owning `buf`; set by `init`.
---@type fun(buf: integer): {name: string, description: string?}[]
M.commands = function()
  return {}
end

---@class elelem.InputActions
---@field submit fun(text: string): boolean true when the text was taken (else it stays)
---@field cancel fun()
---@field busy fun(): boolean whether a turn runs (then <C-c> in insert mode cancels it)

--- Creates a prompt buffer wired to `actions`.
---@param name string
---@param actions elelem.InputActions
---@return integer
function M.create(name, actions)
  local buf = api.nvim_create_buf(false, true)
  require("elelem.buffers").name(buf, "elelem://prompt/" .. name)
  vim.bo[buf].filetype = "markdown"
  vim.bo[buf].omnifunc = "v:lua.require'elelem.input'.omnifunc"
  vim.b[buf].elelem_prompt = true
  local function submit()
    local text = M.peek(buf)
    if text and actions.submit(text) then
      api.nvim_buf_set_lines(buf, 0, -1, false, {}) -- a refused prompt stays to be sent later
    end
  end
  local map = function(modes, lhs, fn, desc)
    vim.keymap.set(modes, lhs, fn, { buffer = buf, desc = desc, nowait = true })
  end
  map("n", "<CR>", submit, "elelem: send the prompt")
  map({ "n", "i" }, "<C-s>", submit, "elelem: send the prompt (the prompt area stays in its mode)")
  map("n", "<C-c>", actions.cancel, "elelem: cancel the turn")
  -- the winbar says "<C-c> cancels" while a turn runs: from insert mode too (after <C-s>),
  -- staying in it; with no turn running, <C-c> leaves insert mode as it does everywhere
  vim.keymap.set("i", "<C-c>", function()
    if actions.busy() then
      vim.schedule(actions.cancel)
      return ""
    end
    return "<C-c>"
  end, { buffer = buf, expr = true, nowait = true, desc = "elelem: cancel the running turn" })
  -- no `q`: closing the chat by one key sent the next keys into the file (:ElelemClose)
  vim.keymap.set("i", "<Tab>", function()
    local before = api.nvim_get_current_line():sub(1, api.nvim_win_get_cursor(0)[2])
    if vim.fn.pumvisible() == 1 then
      return "<C-n>"
    elseif before:match("^/%S*$") then
      return "<C-x><C-o>"
    elseif before:match("%S$") or before:match("^/%S+%s+$") then
      M.arguments(buf, before, function(start, items)
        local now = api.nvim_get_current_line():sub(1, api.nvim_win_get_cursor(0)[2])
        if #items > 0 and api.nvim_get_current_buf() == buf and vim.fn.mode() == "i" and now == before then
          vim.fn.complete(start, items)
        end
      end)
      return ""
    end
    return "<Tab>"
  end, { buffer = buf, expr = true, desc = "elelem: complete a command or its argument" })
  return buf
end

--- The buffer's text, trimmed; nil when there is nothing to send.
---@param buf integer
---@return string?
function M.peek(buf)
  local text = vim.trim(table.concat(api.nvim_buf_get_lines(buf, 0, -1, false), "\n"))
  return text ~= "" and text or nil
end

--- Puts `text` back in the buffer when it holds nothing (a refused prompt); true if it did.
---@param buf integer
---@param text string
---@return boolean
function M.restore(buf, text)
  if M.peek(buf) then
    return false -- a draft of the user's is not replaced
  end
  M.fill(buf, text)
  return true
end

--- Puts `text` in the buffer (e.g. a selection waiting for a question).
---@param buf integer
---@param text string
function M.fill(buf, text)
  api.nvim_buf_set_lines(buf, 0, -1, false, vim.split(text, "\n", { plain = true }))
end

--- Command names matching `prefix` (which starts with `/`), as completion items.
---@param commands {name: string, description: string?}[]
---@param prefix string
---@return {word: string, menu: string?}[]
function M.matches(commands, prefix)
  local items = {}
  for _, command in ipairs(commands) do
    local word = "/" .. command.name
    if vim.startswith(word, prefix) then
      table.insert(items, { word = word, menu = command.description })
    end
  end
  table.sort(items, function(a, b)
    return a.word < b.word
  end)
  return items
end

--- Asks the daemon for `text`'s completions (`session/complete`); set by `init`.
---@type fun(text: string, cb: fun(items: string[]))
M.request = function(_, cb)
  cb({})
end

--- Completions from the daemon for the text before the cursor: a command's argument
--- after `/name `, else a file name for the last word. Calls `done(start_column, items)`
--- with the 1-based column where the completed word starts (for `complete()`).
---@param _buf integer
---@param before string the line up to the cursor
---@param done fun(start: integer, items: string[])
function M.arguments(_buf, before, done)
  local head = before:match("^/%S+%s+") or before:match("^.*%s") or ""
  M.request(before, function(items)
    done(#head + 1, items)
  end)
end

--- 'omnifunc' of prompt buffers: completes `/name` at the start of a line.
---@param findstart integer
---@param base string
---@return integer|table
function M.omnifunc(findstart, base)
  if findstart == 1 then
    local before = api.nvim_get_current_line():sub(1, api.nvim_win_get_cursor(0)[2])
    return before:match("^/%S*$") and 0 or -3
  end
  return M.matches(M.commands(api.nvim_get_current_buf()), base)
end

return M
