--- The editor's context (issue 21, protocol.md "The editor's context"): `#buffer`,
--- `#selection` and `#diagnostics` in a prompt become `session/turn` attachments (taken
--- from the buffer the user was in before the chat: the "editor buffer"); `:ElelemAdd`
--- adds the current file or a range as a pending attachment of the next prompt; and the
--- live `editor/state` (active file, cursor, visible lines, problems) is sent debounced.
local buffers = require("elelem.buffers")

local M = {}

local api = vim.api

local SEVERITY = { [1] = "error", [2] = "warning", [3] = "information", [4] = "hint" }

--- The last file buffer and window the user was in (the chat's own buffers are not).
M.last = { buf = nil, win = nil }

---@param buf integer
---@return boolean
local function is_file_buffer(buf)
  return api.nvim_buf_is_valid(buf) and vim.bo[buf].buftype == "" and not vim.b[buf].elelem_prompt
    and not vim.b[buf].elelem_review and not vim.b[buf].elelem_chat
end

--- Notes the current buffer as the editor buffer when it is a file buffer.
function M.track()
  local buf = api.nvim_get_current_buf()
  if is_file_buffer(buf) then
    M.last.buf, M.last.win = buf, api.nvim_get_current_win()
  end
end

--- The editor buffer: the current one if it is a file buffer, else the last one.
---@return integer?
function M.editor_buffer()
  local buf = api.nvim_get_current_buf()
  if is_file_buffer(buf) then
    return buf
  end
  if M.last.buf and api.nvim_buf_is_valid(M.last.buf) and api.nvim_buf_is_loaded(M.last.buf) then
    return M.last.buf
  end
  return nil
end

---@param buf integer
---@return string? path absolute, nil for an unnamed buffer
local function path_of(buf)
  local name = api.nvim_buf_get_name(buf)
  return name ~= "" and buffers.resolved(name) or nil
end

--- The LSP character (UTF-16) of byte column `col` of line `row` (0-based).
---@param buf integer
---@param row integer
---@param col integer
---@return integer
local function character(buf, row, col)
  local line = api.nvim_buf_get_lines(buf, row, row + 1, false)[1] or ""
  col = math.max(0, math.min(col, #line))
  local ok, index = pcall(vim.str_utfindex, line, "utf-16", col, false)
  return ok and index or col
end

--- A file attachment of the whole buffer: its path (the daemon reads the unsaved text
--- through files/read), or its text for an unnamed one.
---@param buf integer
---@return table
function M.file(buf)
  local path = path_of(buf)
  if path then
    return { type = "file", path = path }
  end
  return { type = "file", path = "[No Name]", text = buffers.text(buf) }
end

--- A selection attachment of lines `l1`..`l2` (1-based), or of the last visual selection.
---@param buf integer
---@param l1 integer?
---@param l2 integer?
---@return table? attachment
---@return string? problem
function M.selection(buf, l1, l2)
  local start, finish, mode
  if l1 and l2 then
    start, finish, mode = { l1, 0 }, { l2, vim.v.maxcol }, "V"
  else
    start, finish = api.nvim_buf_get_mark(buf, "<"), api.nvim_buf_get_mark(buf, ">")
    if start[1] == 0 or finish[1] == 0 then
      return nil, "#selection: no visual selection in this buffer yet (select lines, then come back)"
    end
    mode = api.nvim_buf_call(buf, function() -- per buffer, as its '< and '> marks
      return vim.fn.visualmode()
    end)
  end
  local lines = api.nvim_buf_get_lines(buf, start[1] - 1, finish[1], false)
  local range, text
  if mode == "v" then
    local last = lines[#lines] or ""
    local stop = math.min(#last, finish[2] + 1)
    stop = stop + math.max(0, vim.str_utf_end(last, math.max(1, stop)))
    lines[#lines] = last:sub(1, stop)
    lines[1] = lines[1]:sub(start[2] + 1)
    text = table.concat(lines, "\n")
    range = {
      start = { line = start[1] - 1, character = character(buf, start[1] - 1, start[2]) },
      ["end"] = { line = finish[1] - 1, character = character(buf, finish[1] - 1, stop) },
    }
  else -- linewise (blockwise too: its lines)
    text = table.concat(lines, "\n") .. "\n"
    range = { start = { line = start[1] - 1, character = 0 }, ["end"] = { line = finish[1], character = 0 } }
  end
  return { type = "selection", path = path_of(buf) or "[No Name]", range = range, text = text }
end

--- The buffer's problems (`vim.diagnostic.get`) as LSP ranges and severity strings.
---@param buf integer?
---@return table[]
function M.problems(buf)
  local items = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    local end_lnum = d.end_lnum or d.lnum
    local dbuf = d.bufnr or buf
    local item = {
      range = {
        start = { line = d.lnum, character = dbuf and character(dbuf, d.lnum, d.col or 0) or (d.col or 0) },
        ["end"] = { line = end_lnum, character = dbuf and character(dbuf, end_lnum, d.end_col or d.col or 0) or (d.end_col or 0) },
      },
      severity = SEVERITY[d.severity] or "error",
      message = tostring(d.message or ""),
      source = d.source,
    }
    if not buf and dbuf and path_of(dbuf) then
      item.path = path_of(dbuf)
    end
    table.insert(items, item)
  end
  return items
end

---@param buf integer
---@return table
function M.diagnostics(buf)
  return { type = "diagnostics", path = path_of(buf), items = M.problems(buf) }
end

local VARIABLES = { "buffer", "selection", "diagnostics" }

--- Takes `#buffer`, `#selection` and `#diagnostics` out of `text` and makes their
--- attachments. Returns the text, the attachments, and a problem that stops the send.
---@param text string
---@return string text
---@return table[] attachments
---@return string? problem
function M.expand(text)
  local found = {}
  local rest = text
  for _, name in ipairs(VARIABLES) do
    local pattern = "%f[%w#]#" .. name .. "%f[^%w_]"
    if rest:find(pattern) then
      found[name] = true
      rest = rest:gsub("[ \t]?" .. pattern, "")
    end
  end
  if not next(found) then
    return text, {}, nil
  end
  local buf = M.editor_buffer()
  if not buf then
    return text, {}, "#buffer, #selection and #diagnostics need a file buffer: open one, then come back"
  end
  local attachments = {}
  if found.buffer then
    table.insert(attachments, M.file(buf))
  end
  if found.selection then
    local selection, problem = M.selection(buf)
    if not selection then
      return text, {}, problem
    end
    table.insert(attachments, selection)
  end
  if found.diagnostics then
    table.insert(attachments, M.diagnostics(buf))
  end
  rest = vim.trim(rest)
  return rest ~= "" and rest or "(see the attachments)", attachments, nil
end

--- A short label for an attachment, for the chat and the prompt area.
---@param a table
---@return string
function M.label(a)
  local path = a.path and (a.path:sub(1, 1) == "/" and buffers.shown(a.path) or a.path) or ""
  if a.type == "selection" and a.range then
    return ("selection %s:%d-%d"):format(path, a.range.start.line + 1,
      a.range["end"].character == 0 and a.range["end"].line > a.range.start.line and a.range["end"].line
        or a.range["end"].line + 1)
  elseif a.type == "diagnostics" then
    return ("diagnostics %s (%d)"):format(path, #(a.items or {}))
  end
  return ("%s %s"):format(a.type, path)
end

--- `:ElelemAdd`: the current file (or lines `line1`..`line2`; the visual selection when
--- they are its lines) waits as an attachment of the next prompt; `clear` drops them.
---@param line1 integer?
---@param line2 integer?
---@param clear boolean?
function M.add(line1, line2, clear)
  local s = require("elelem.session").current()
  if clear then
    s.pending = nil
    s:show_pending()
    return true
  end
  local buf = api.nvim_get_current_buf()
  if vim.bo[buf].buftype ~= "" then
    buf = M.editor_buffer() or buf
  end
  local attachment
  if line1 then
    local v1, v2 = api.nvim_buf_get_mark(buf, "<")[1], api.nvim_buf_get_mark(buf, ">")[1]
    if v1 == line1 and v2 == line2 then
      attachment = M.selection(buf)
    end
    attachment = attachment or M.selection(buf, line1, line2)
  else
    attachment = M.file(buf)
  end
  s:attach({ attachment })
  s:show("input")
  return true
end

-- editor/state --------------------------------------------------------------------------

local timer
local last_sent

--- The state of the editor buffer's window: file, cursor (or visual selection), visible
--- lines, problems.
---@return table?
function M.state()
  local buf = M.editor_buffer()
  if not buf then
    return { activeFile = vim.NIL }
  end
  local path = path_of(buf)
  if not path then
    return { activeFile = vim.NIL }
  end
  local win = api.nvim_get_current_buf() == buf and api.nvim_get_current_win() or M.last.win
  local state = { activeFile = path }
  if win and api.nvim_win_is_valid(win) and api.nvim_win_get_buf(win) == buf then
    local cursor = api.nvim_win_get_cursor(win)
    local at = { line = cursor[1] - 1, character = character(buf, cursor[1] - 1, cursor[2]) }
    local mode = api.nvim_get_current_win() == win and vim.fn.mode() or "n"
    if mode == "v" or mode == "V" or mode == "\22" then
      local v = vim.fn.getpos("v")
      local l1, l2 = math.min(v[2], cursor[1]), math.max(v[2], cursor[1])
      local lines = api.nvim_buf_get_lines(buf, l1 - 1, l2, false)
      state.selection = { range = { start = { line = l1 - 1, character = 0 }, ["end"] = { line = l2, character = 0 } },
        text = table.concat(lines, "\n"):sub(1, 4000) }
    else
      state.selection = { range = { start = at, ["end"] = at } }
    end
    local top, bottom = vim.fn.line("w0", win), vim.fn.line("w$", win)
    state.visibleRanges = { { start = { line = top - 1, character = 0 }, ["end"] = { line = bottom, character = 0 } } }
  end
  local problems = M.problems(buf)
  if #problems > 0 then
    state.diagnostics = vim.list_slice(problems, 1, 20)
  end
  return state
end

--- Sends `editor/state` now if it changed (and the daemon runs).
function M.send_state()
  local daemon = require("elelem.daemon")
  if daemon.state() ~= "ready" or not require("elelem.config").options.editor_state then
    return
  end
  local state = M.state()
  local encoded = vim.json.encode(state)
  if encoded == last_sent then
    return
  end
  last_sent = encoded
  daemon.notify("editor/state", state)
end

--- Schedules `send_state` after a pause of `ms` (default 400): every call restarts the wait.
---@param ms integer?
function M.debounce(ms)
  timer = timer or vim.uv.new_timer()
  timer:stop()
  timer:start(ms or 400, 0, vim.schedule_wrap(M.send_state))
end

--- Forgets what was sent (a new daemon knows nothing).
function M.reset()
  last_sent = nil
end

return M
