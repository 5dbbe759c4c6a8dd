--- The chat buffer of one session: a Markdown transcript that events stream into.
---
--- A turn reads `## You`, the prompt, `## elelem`, then per round the dimmed (foldable)
--- thinking, the streamed reply and one `+ name(args)` line per tool call that gains ` ✓` or
--- ` ✗ error` when its result comes. Stream deltas are queued and written once per loop tick;
--- every other write flushes the queue first, so the buffer always follows event order.
local thinking = require("elelem.thinking")

local M = {}

local api = vim.api
local ns = api.nvim_create_namespace("elelem.chat")
local ns_think = api.nvim_create_namespace("elelem.thinking")
local ns_tool = api.nvim_create_namespace("elelem.tools")
local ns_sticky = api.nvim_create_namespace("elelem.sticky")

---@class elelem.Chat
---@field name string
---@field buf integer?
---@field empty boolean the buffer holds nothing yet
---@field mode "thinking"|"saying"|nil the kind of text the last line is open for
---@field block integer? first row of the open block
---@field think_mark integer?
---@field header integer? extmark on the running turn's `## elelem` line
---@field said boolean text was streamed since the turn began or the last tool call
---@field listed boolean the last lines are tool lines
---@field previewed boolean the running tool call's diff is shown already
---@field calls table<string, integer> tool call id -> extmark on its line
---@field tools table<integer, elelem.ToolCall> extmark of a tool line -> its call and result
---@field errors table<string, boolean> error texts the running turn's `event/say` showed
---@field queue {kind: string, text: string}[]
---@field scheduled boolean
local Chat = {}
Chat.__index = Chat

---@param name string unique part of the buffer name
---@return elelem.Chat
function M.new(name)
  return setmetatable(
    { name = name, empty = true, said = false, calls = {}, tools = {}, errors = {}, queue = {}, scheduled = false },
    Chat
  )
end

--- The chat buffer, created on first use (or again if it was wiped).
---@return integer
function Chat:buffer()
  if self.buf and api.nvim_buf_is_valid(self.buf) then
    return self.buf
  end
  local buf = api.nvim_create_buf(false, true)
  require("elelem.buffers").name(buf, "elelem://chat/" .. self.name)
  vim.bo[buf].filetype = "markdown"
  vim.bo[buf].modifiable = false
  vim.b[buf].elelem_chat = true
  self.buf, self.empty, self.mode, self.calls, self.tools = buf, true, nil, {}, {}
  thinking.track(buf)
  return buf
end

--- Runs `fn(buf)` with the buffer modifiable, keeping windows that showed the last line
--- following the end.
---@param fn fun(buf: integer)
function Chat:write(fn)
  local buf = self:buffer()
  local last = api.nvim_buf_line_count(buf)
  local follow = {}
  for _, win in ipairs(vim.fn.win_findbuf(buf)) do
    if api.nvim_win_get_cursor(win)[1] >= last then
      table.insert(follow, win)
    end
  end
  vim.bo[buf].modifiable = true
  local ok, err = pcall(fn, buf)
  vim.bo[buf].modifiable = false
  local count = api.nvim_buf_line_count(buf)
  local width = #(api.nvim_buf_get_lines(buf, count - 1, count, false)[1] or "")
  for _, win in ipairs(follow) do
    -- the end of the last line: a paragraph taller than the window shows where it goes on
    pcall(api.nvim_win_set_cursor, win, { count, width })
  end
  if not ok then
    error(err, 0)
  end
end

--- Puts every window of the chat at its end again: they follow what is written from now on.
function Chat:follow()
  if not (self.buf and api.nvim_buf_is_valid(self.buf)) then
    return
  end
  local count = api.nvim_buf_line_count(self.buf)
  local width = #(api.nvim_buf_get_lines(self.buf, count - 1, count, false)[1] or "")
  for _, win in ipairs(vim.fn.win_findbuf(self.buf)) do
    pcall(api.nvim_win_set_cursor, win, { count, width })
  end
end

--- Appends whole lines (highlighted with `hl` if given); returns the first new row (0-based).
---@param lines string[]
---@param hl string?
---@return integer
function Chat:lines(lines, hl)
  self:flush()
  local row = 0
  self:write(function(buf)
    if self.empty then
      api.nvim_buf_set_lines(buf, 0, -1, false, lines)
      self.empty = false
    else
      row = api.nvim_buf_line_count(buf)
      api.nvim_buf_set_lines(buf, -1, -1, false, lines)
    end
    if hl then
      for i, line in ipairs(lines) do
        api.nvim_buf_set_extmark(buf, ns, row + i - 1, 0, { end_col = #line, hl_group = hl, priority = 200 })
      end
    end
  end)
  self.mode = nil
  return row
end

---@param text string
---@return string[]
local function split(text)
  return vim.split(text, "\n", { plain = true })
end
M.split = split

--- Writes one stream delta at the end of the buffer.
---@param kind "thinking"|"saying"
---@param text string
function Chat:stream(kind, text)
  self:write(function(buf)
    if self.mode ~= kind then
      if self.empty then
        self.empty = false
      else
        -- after tool lines (a Markdown list), a blank line starts a new paragraph
        api.nvim_buf_set_lines(buf, -1, -1, false, self.listed and { "", "" } or { "" })
      end
      self.listed = false
      self.mode, self.block, self.think_mark = kind, api.nvim_buf_line_count(buf) - 1, nil
    end
    local count = api.nvim_buf_line_count(buf)
    local parts = split(text)
    local last_row = count - 1 + #parts - 1
    if kind == "thinking" then
      thinking.mark(buf, self.block, last_row) -- before the change, so folds see it
    end
    parts[1] = (api.nvim_buf_get_lines(buf, count - 1, count, false)[1] or "") .. parts[1]
    api.nvim_buf_set_lines(buf, count - 1, count, false, parts)
    if kind == "thinking" then
      self.think_mark = api.nvim_buf_set_extmark(buf, ns_think, self.block, 0, {
        id = self.think_mark,
        end_row = last_row,
        end_col = #parts[#parts],
        hl_group = "ElelemThinking",
        priority = 200,
      })
    end
  end)
  if kind == "saying" then
    self.said = true
  end
end

--- Queues a stream delta; the queue is written on the next loop tick (or by the next write).
---@param kind "thinking"|"saying"
---@param text string
function Chat:push(kind, text)
  local last = self.queue[#self.queue]
  if last and last.kind == kind then
    last.text = last.text .. text
  else
    table.insert(self.queue, { kind = kind, text = text })
  end
  if not self.scheduled then
    self.scheduled = true
    vim.schedule(function()
      self:flush()
    end)
  end
end

--- Writes the queued deltas now.
function Chat:flush()
  self.scheduled = false
  local queue = self.queue
  self.queue = {}
  for _, item in ipairs(queue) do
    self:stream(item.kind, item.text)
  end
end

--- Starts a turn: the prompt and the `## elelem` heading the reply streams under. The
--- heading shows the turn's number as `:ElelemUndo`/`:ElelemRewind N` count it; the
--- prompt is indented four spaces, a Markdown code block, so what the user typed shows as
--- typed (`a ** b`, `__init__` were concealed as emphasis).
---@param text string
function Chat:user(text)
  self.count = (self.count or 0) + 1
  local heading = self.empty and 0 or 1 -- the `## You` line, after a blank one if any
  local lines = self.empty and {} or { "" }
  vim.list_extend(lines, { "## You", "" })
  for _, line in ipairs(split(text)) do
    table.insert(lines, line == "" and "" or "    " .. line)
  end
  vim.list_extend(lines, { "", "## elelem" })
  local first = self:lines(lines)
  local row = first + #lines - 1
  local buf = self:buffer()
  api.nvim_buf_set_extmark(buf, ns, first + heading, 0, {
    virt_text = { { ("turn %d"):format(self.count), "ElelemDim" } },
    virt_text_pos = "eol",
  })
  self.header = api.nvim_buf_set_extmark(buf, ns, row, 0, {})
  self.said, self.calls, self.listed, self.errors = false, {}, false, {}
  self.plan_mark = nil -- a new turn's plan is a new block
end

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
---@param max integer
---@return string
local function clip(text, max)
  text = text:gsub("%c", " ") -- one line; a NUL would make the text a Blob to Vim
  if vim.fn.strchars(text) > max then
    return vim.fn.strcharpart(text, 0, max - 1) .. "…"
  end
  return text
end

--- The key of a tool call among the turn's: a sub-agent's ids are its own (the child's
--- first call and the parent's may both be `stub-1`), so they go under the task call's.
---@param params {id: any, parentToolCallId: any}
---@return string
function M.call_key(params)
  local id = tostring(params.id)
  return params.parentToolCallId and (tostring(params.parentToolCallId) .. "/" .. id) or id
end

--- A tool call about to run: `+ name(args)`; a sub-agent's (`parentToolCallId`) is
--- indented under its task call.
---@param params {id: string, name: string, arguments: table?, parentToolCallId: string?}
function Chat:doing(params)
  local name = tostring(params.name)
  local indent = params.parentToolCallId and "    " or ""
  local line = indent .. clip(("+ %s(%s)"):format(name, json(params.arguments or {})), 160)
  local row = self:lines({ line })
  local buf = self:buffer()
  api.nvim_buf_set_extmark(buf, ns, row, #indent, { end_col = #indent + 2 + #name, hl_group = "ElelemTool" })
  local mark = api.nvim_buf_set_extmark(buf, ns_tool, row, 0, {})
  self.calls[M.call_key(params)] = mark
  self.tools[mark] = { name = name, arguments = params.arguments }
  self.said, self.listed, self.previewed = false, true, false
end

--- Its result: ` ✓` or ` ✗ error` at the end of the call's line.
---@param params {id: string, name: string, ok: boolean, result: table?}
function Chat:result(params)
  self:flush()
  local mark = self.calls[M.call_key(params)]
  if not mark then
    self:doing({ id = params.id, name = params.name, arguments = {}, parentToolCallId = params.parentToolCallId })
    mark = self.calls[M.call_key(params)]
  end
  local buf = self:buffer()
  local call = self.tools[mark]
  if call then
    call.ok, call.result = params.ok == true, params.result
  end
  local row = api.nvim_buf_get_extmark_by_id(buf, ns_tool, mark, {})[1]
  local line = api.nvim_buf_get_lines(buf, row, row + 1, false)[1]
  local result = type(params.result) == "table" and params.result or {}
  local status = type(result.exit_status) == "number" and ("exit " .. result.exit_status) or nil
  local suffix = params.ok and " ✓" or (" ✗ " .. clip(tostring(result.error or status or "failed"), 120))
  self:write(function()
    api.nvim_buf_set_text(buf, row, #line, row, #line, { suffix })
    local hl = params.ok and "ElelemToolOk" or "ElelemToolError"
    api.nvim_buf_set_extmark(buf, ns, row, #line, { end_col = #line + #suffix, hl_group = hl })
  end)
  local diff = type(params.result) == "table" and params.result.diff
  if type(diff) == "string" and diff ~= "" and not self.previewed then
    self:diff(diff) -- what a write or edit changed
  end
end

--- A unified diff as a fenced `diff` block (a permission's preview, a write's result).
---@param diff string
function Chat:diff(diff)
  local lines = { "```diff" }
  vim.list_extend(lines, split((diff:gsub("\n$", ""))))
  table.insert(lines, "```")
  self:lines(lines)
  self.previewed = true
end

--- 12345 as `12.3k`.
---@param n number
local function short(n)
  if n >= 1000000 then
    return ("%.1fM"):format(n / 1000000)
  elseif n >= 1000 then
    return ("%.1fk"):format(n / 1000)
  end
  return tostring(n)
end

--- The context meter and the session's cost from the turn's `event/usage`, if it came:
--- ` · 15/1.0k ctx (1%) · $0.0108`.
---@param meter table?
---@return string
local function meter_text(meter)
  if type(meter) ~= "table" then
    return ""
  end
  local text = ""
  local used, size = tonumber(meter.used), tonumber(meter.size)
  if used and size and size > 0 then
    text = (" · %s/%s ctx (%d%%)"):format(short(used), short(size), math.floor(used * 100 / size))
  end
  local cost = type(meter.session) == "table" and tonumber(meter.session.cost)
  if cost then
    text = text .. (" · $%.4f"):format(cost)
  end
  return text
end

--- Ends the turn: what the stream did not show, and a dim summary beside the heading.
---@param result {reply: string?, stopReason: string?, usage: table?}
function Chat:finish(result)
  self:flush()
  local reason = result.stopReason or "end_turn"
  local reply = result.reply or ""
  if reason == "error" then
    -- the daemon said the provider's error already (`event/say`); `Error: <it>` is no news
    if not self.errors[(reply:gsub("^Error: ", ""))] then
      self:lines(split(reply), "ElelemError")
    end
  elseif reason == "cancelled" then
    self:lines({ "[cancelled]" }, "ElelemDim")
  elseif reason == "max_turn_requests" then
    self:lines({ "[stopped: too many tool rounds]" }, "ElelemError")
  elseif not self.said and reply ~= "" then
    self:lines(split(reply))
  end
  local summary = reason
  local usage = result.usage
  if type(usage) == "table" and usage.input_tokens then
    local cached = tonumber(usage.cache_read_tokens) or 0
    local input = cached > 0 and ("%s in (%s cached)"):format(usage.input_tokens, cached) or (usage.input_tokens .. " in")
    summary = ("%s · %s · %s out"):format(reason, input, usage.output_tokens or 0)
  end
  summary = summary .. meter_text(self.meter)
  if self.header then
    local row = api.nvim_buf_get_extmark_by_id(self:buffer(), ns, self.header, {})[1]
    if row then
      api.nvim_buf_set_extmark(self:buffer(), ns, row, 0, { virt_text = { { "  " .. summary, "ElelemDim" } } })
    end
  end
  self.header, self.mode, self.listed, self.errors, self.meter = nil, nil, false, {}, nil
end

local PLAN_MARKS = { pending = "[ ]", in_progress = "[~]", completed = "[x]" }

--- The plan (`event/plan`'s entries) as a block of checklist lines: written once per turn,
--- then updated in place by every later plan of that turn.
---@param entries {content: string, status: string}[]
function Chat:plan(entries)
  local lines = { "Plan:" }
  for _, entry in ipairs(type(entries) == "table" and entries or {}) do
    local item = type(entry) == "table" and entry or { content = entry }
    local mark = PLAN_MARKS[item.status] or "[ ]"
    table.insert(lines, ("  %s %s"):format(mark, clip(tostring(item.content or ""), 200)))
  end
  local buf = self:buffer()
  local at = self.plan_mark and api.nvim_buf_get_extmark_by_id(buf, ns, self.plan_mark, { details = true })
  if at and at[1] then
    self:flush()
    local first, last = at[1], at[3].end_row or at[1]
    self:write(function()
      api.nvim_buf_set_lines(buf, first, last + 1, false, lines)
      self.plan_mark = api.nvim_buf_set_extmark(buf, ns, first, 0, { id = self.plan_mark, end_row = first + #lines - 1 })
    end)
  else
    local row = self:lines(lines)
    api.nvim_buf_set_extmark(buf, ns, row, 0, { end_col = 5, hl_group = "ElelemTitle" })
    self.plan_mark = api.nvim_buf_set_extmark(buf, ns, row, 0, { end_row = row + #lines - 1 })
  end
  self.listed = true
end

--- Something the agent printed (`event/say`); a sub-agent's is indented.
---@param params {text: string, kind: string?, parentToolCallId: string?}
function Chat:say(params)
  local text = tostring(params.text or "")
  if params.parentToolCallId then
    text = "    " .. text:gsub("\n", "\n    ")
  end
  if params.kind == "error" then
    self.errors[text] = true
  end
  if params.kind == "error" and not text:lower():match("^error") then
    text = "error: " .. text -- as the terminal prints it
  end
  local hl = ({ error = "ElelemError", info = "ElelemDim" })[params.kind or "plain"]
  self:lines(split(text), hl)
end

--- A line kept by `key` (an MCP server's state): written once, then replaced in place,
--- so a state that keeps changing is one line, never a line per change.
---@param key string
---@param text string
---@param hl string?
function Chat:sticky(key, text, hl)
  self.stickies = self.stickies or {}
  text = text:gsub("[\r\n]", " ")
  local buf = self:buffer()
  local marks = self.stickies[key]
  local at = marks and api.nvim_buf_get_extmark_by_id(buf, ns_sticky, marks.pos, {})
  if at and at[1] then
    local old = api.nvim_buf_get_lines(buf, at[1], at[1] + 1, false)[1] or ""
    self:write(function()
      api.nvim_buf_set_text(buf, at[1], 0, at[1], #old, { text })
      api.nvim_buf_set_extmark(buf, ns_sticky, at[1], 0, { id = marks.hl, end_col = #text, hl_group = hl or "ElelemDim" })
    end)
    return
  end
  local row = self:lines({ text })
  self.stickies[key] = {
    pos = api.nvim_buf_set_extmark(buf, ns_sticky, row, 0, {}),
    hl = api.nvim_buf_set_extmark(buf, ns_sticky, row, 0, { end_col = #text, hl_group = hl or "ElelemDim" }),
  }
end

--- A line that is not part of the conversation (errors of the client, notices).
---@param text string
---@param hl string?
function Chat:notice(text, hl)
  self:lines(split(text), hl or "ElelemDim")
end

--- A slash command and, once it has answered, its output in a fence longer than any in it.
---@param line string
function Chat:command(line)
  local lines = self.empty and {} or { "" }
  vim.list_extend(lines, { "## " .. line })
  self:lines(lines)
end

---@param output string
function Chat:output(output)
  local longest = 2
  for run in output:gmatch("`+") do
    longest = math.max(longest, #run)
  end
  local fence = ("`"):rep(longest + 1)
  local lines = { "", fence .. "text" }
  vim.list_extend(lines, split(output == "" and "(no output)" or (output:gsub("\n$", ""))))
  table.insert(lines, fence)
  self:lines(lines)
end

--- A stored conversation, redrawn (`session/load`'s `history`: its messages with the tool
--- calls between them, each drawn as it was live, its diff and failure included; a daemon
--- without `history` gives `messages`, redrawn without the tool calls).
---@param entries {type: string?, role: string?, content: string?, id: string?, name: string?, arguments: table?, ok: boolean?, result: table?, prompt: boolean?}[]
---@return boolean plans a plan was drawn (a `todo` call's), so the last one needs no redraw
function Chat:history(entries)
  local open = false -- a `## elelem` reply is open: tool calls and text go under it
  local plans = false
  local summary = false -- the next user message is the compaction's summary (protocol.md;
  -- it is marked `prompt = false` too, which holds where a page begins with it)
  for _, entry in ipairs(entries) do
    if entry.type == "compacted" then
      if open then
        self:finish({ stopReason = "end_turn", reply = "" })
        open = false
      end
      self:notice("(context compacted here: the model reads a summary of what came before)")
      summary = true
    elseif (summary or entry.prompt == false) and entry.role == "user" then
      -- the summary is no prompt the user typed: dim, as typed, and no turn's number (a
      -- `## You` heading here made every later turn's number one more than the daemon's)
      summary = false
      local lines = {}
      for _, line in ipairs(split(tostring(entry.content or ""))) do
        table.insert(lines, line == "" and "" or "    " .. line)
      end
      self:lines(lines, "ElelemDim")
    elseif entry.type == "tool" then
      if not open then
        self:user("")
        open = true
      end
      self:doing(entry)
      self:result(entry)
      local args = type(entry.arguments) == "table" and entry.arguments or {}
      if entry.name == "todo" and entry.ok and type(args.todos) == "table" then
        self:plan(args.todos) -- where it was shown live, updated in place within its turn
        plans = true
      end
    elseif entry.role == "user" then
      if open then
        self:finish({ stopReason = "end_turn", reply = "" })
      end
      self:user(tostring(entry.content or ""))
      open = true
    elseif entry.role == "assistant" then
      local content = tostring(entry.content or "")
      if content ~= "" then
        self:stream("saying", content) -- after tool lines, a blank line first, as live
      end
      self:finish({ stopReason = "end_turn", reply = "" })
      open = false
    end
  end
  if open then
    self:finish({ stopReason = "end_turn", reply = "" })
  end
  return plans
end

--- Empties the buffer (a new session).
function Chat:clear()
  self:flush()
  local buf = self:buffer()
  self:write(function()
    api.nvim_buf_set_lines(buf, 0, -1, false, {})
  end)
  self.stickies = {}
  for _, space in ipairs({ ns, ns_think, ns_tool, ns_sticky }) do
    api.nvim_buf_clear_namespace(buf, space, 0, -1)
  end
  thinking.track(buf)
  self.empty, self.mode, self.header, self.calls, self.tools, self.said = true, nil, nil, {}, {}, false
  self.count = 0 -- the turns drawn: their numbers as the user counts them
end

--- The tool call whose line is `row` (0-based), if it is a tool line.
---@param row integer
---@return elelem.ToolCall?
function Chat:call_at(row)
  if not (self.buf and api.nvim_buf_is_valid(self.buf)) then
    return nil
  end
  for _, mark in ipairs(api.nvim_buf_get_extmarks(self.buf, ns_tool, { row, 0 }, { row, -1 }, {})) do
    if self.tools[mark[1]] then
      return self.tools[mark[1]]
    end
  end
end

--- All lines of the buffer.
---@return string[]
function Chat:text()
  self:flush()
  return api.nvim_buf_get_lines(self:buffer(), 0, -1, false)
end

return M
