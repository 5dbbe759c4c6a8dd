--- `/context edit N` (and `:ElelemContext edit N`): message N of `/context`'s list (1 is
--- the system prompt) opens in a scratch buffer; `:w` sends its text as
--- `session/editContext {sessionId, index = N - 1, content}` (protocol.md "Context
--- editing"). An empty buffer deletes the message. A refusal (`invalid_edit`,
--- `session_busy`, ...) is said clearly and the buffer stays, modified, to write again.
--- Before writing, the message is fetched again: if another stands at its place since it
--- was opened (an edit, a rewind), nothing is sent and the buffer stays.
local daemon = require("elelem.daemon")
local errors = require("elelem.errors")

local M = {}

local api = vim.api

--- What a message's `content` shows as text: a string, or the text parts of a list.
---@param content any
---@return string text
---@return integer images how many image parts it holds (kept by an edit)
local function text_of(content)
  if type(content) == "string" then
    return content, 0
  end
  local texts, images = {}, 0
  for _, part in ipairs(type(content) == "table" and content or {}) do
    if type(part) == "table" and part.type == "text" then
      table.insert(texts, tostring(part.text or ""))
    elseif type(part) == "table" and part.type == "image" then
      images = images + 1
    end
  end
  return table.concat(texts, "\n"), images
end

---@param message string
---@param level integer?
local function notify(message, level)
  vim.notify("elelem: " .. message, level or vim.log.levels.ERROR)
end

--- One line for a refusal, with the daemon's `data.errors` when it gives them.
---@param err elelem.Error
---@return string
local function explain(err)
  local shown = errors.message(err)
  local list = type(err.data) == "table" and err.data.errors
  if type(list) == "table" and #list > 0 then
    shown = shown .. ": " .. table.concat(vim.tbl_map(tostring, list), "; ")
  end
  return shown
end

--- `session/context` of session `s`, then `cb(messages)`; errors are said and end there.
---@param s elelem.Session
---@param cb fun(messages: table[])
local function fetch(s, cb)
  local id, epoch = s.id, s.epoch
  daemon.request("session/context", { sessionId = id }, function(err, result)
    if epoch ~= s.epoch then
      return notify("the session was replaced: nothing was edited")
    elseif err then
      return notify("could not read the context: " .. explain(err))
    end
    cb(type(result) == "table" and type(result.messages) == "table" and result.messages or {})
  end)
end

--- Writes buffer `buf` (its `BufWriteCmd`) as the new text of its message.
---@param buf integer
local function write(buf)
  local state = vim.b[buf].elelem_edit
  local s = state and require("elelem.session").find(state.sessionId)
  if not s or s.epoch ~= state.epoch then
    return notify("this message's session is gone: nothing was edited")
  end
  local content = table.concat(api.nvim_buf_get_lines(buf, 0, -1, false), "\n")
  fetch(s, function(messages)
    local now = messages[state.index + 1]
    -- (a place that is gone is the daemon's to refuse: invalid_edit)
    if now and (text_of(now.content) ~= state.original or now.role ~= state.role) then
      return notify(("message %d changed since it was opened: nothing was edited (open it again: "
        .. "/context edit %d)"):format(state.index + 1, state.index + 1))
    end
    local params = { sessionId = s.id, index = state.index, content = content }
    daemon.request("session/editContext", params, function(err)
      if err then
        return notify(("message %d not edited: %s (the buffer keeps your text)"):format(state.index + 1, explain(err)))
      end
      if not api.nvim_buf_is_valid(buf) then
        return
      end
      if vim.trim(content) == "" then
        s.chat:notice(("(context: message %d deleted)"):format(state.index + 1))
        notify(("message %d deleted"):format(state.index + 1), vim.log.levels.INFO)
        vim.bo[buf].modified = false
        return vim.schedule(function() -- its number now names the next message
          if api.nvim_buf_is_valid(buf) then
            api.nvim_buf_delete(buf, { force = true })
          end
        end)
      end
      state.original = content
      vim.b[buf].elelem_edit = state
      vim.bo[buf].modified = false
      s.chat:notice(("(context: message %d edited)"):format(state.index + 1))
      notify(("message %d edited"):format(state.index + 1), vim.log.levels.INFO)
    end)
  end)
end

--- Opens message `arg` (a number as `/context` lists them) of session `s` for editing.
---@param s elelem.Session
---@param arg string
---@return boolean ok
---@return string? reason
function M.open(s, arg)
  local n = tonumber(arg)
  if not n or n ~= math.floor(n) or n < 1 or not arg:match("^%d+$") then
    local reason = ("/context edit takes a message number as /context lists them (got %q)"):format(arg:sub(1, 40))
    notify(reason)
    return false, reason
  end
  s:ensure(function(err)
    if err then
      return notify("could not start the session: " .. errors.message(err))
    end
    fetch(s, function(messages)
      local message = messages[n]
      if not message then
        return notify(("no message %d: the context holds %d (see /context)"):format(n, #messages))
      elseif message.role == "system" then
        return notify("message 1 is the system prompt, rendered at each request: it cannot be edited")
      end
      local text, images = text_of(message.content)
      local name = ("elelem://context/%s/%d"):format(s.id, n)
      local old = vim.fn.bufnr(name)
      if old ~= -1 then
        api.nvim_buf_delete(old, { force = true })
      end
      local buf = api.nvim_create_buf(true, false)
      vim.bo[buf].buftype = "acwrite"
      vim.bo[buf].bufhidden = "wipe"
      vim.bo[buf].swapfile = false
      api.nvim_buf_set_name(buf, name)
      api.nvim_buf_set_lines(buf, 0, -1, false, vim.split(text, "\n", { plain = true }))
      vim.bo[buf].filetype = "markdown"
      vim.bo[buf].modified = false
      vim.b[buf].elelem_edit = {
        sessionId = s.id, epoch = s.epoch, index = n - 1, role = message.role, original = text,
      }
      api.nvim_create_autocmd("BufWriteCmd", {
        buffer = buf,
        callback = function()
          write(buf)
        end,
      })
      vim.cmd("belowright split")
      api.nvim_win_set_buf(0, buf)
      local more = images > 0 and (" (its %d image(s) stay)"):format(images) or ""
      notify(("editing message %d (%s)%s: :w sends it, an empty buffer deletes it"):format(n, message.role, more),
        vim.log.levels.INFO)
    end)
  end)
  return true
end

return M
