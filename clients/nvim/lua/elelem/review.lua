--- The review of one proposed change (`files/propose` with `review: true`): a scratch split
--- listing the change's hunks as `git diff` shows them, each marked pending, accepted or
--- rejected. The keys (configurable, `setup({ review = { keys = ... } })`): `ga` / `gr`
--- accept / reject the hunk under the cursor, `gA` / `gR` all of them, `gT` every change of
--- this turn, `]h` / `[h` move between hunks. The review ends when every hunk is decided
--- (or the buffer is wiped: all rejected), and `done` gets the decision.
---
--- Focus is the user's: the split opens beside, without the cursor, and says so (a
--- notification, a chat line, the statusline); `:ElelemReview` moves into it. Its keys are
--- the review buffer's own, so what is typed elsewhere never reaches it. `q` only hides it
--- (it stays pending; `:ElelemReview` shows it again).
local config = require("elelem.config")

local M = {}

local api = vim.api
local ns = api.nvim_create_namespace("elelem.review")

---@class elelem.Decision
---@field accepted integer[] hunk ids
---@field reason string?
---@field acceptAllForTurn boolean?
---@field closed boolean? the review was closed, cancelled or dismissed

---@class elelem.Review
---@field params table the files/propose params
---@field buf integer the review buffer
---@field win integer?
---@field rows table<integer, integer> hunk id -> 0-based row of its header
---@field decided table<integer, boolean> hunk id -> accepted
---@field done fun(decision: elelem.Decision)
---@field finished boolean
local Review = {}
Review.__index = Review
M.Review = Review

---@type elelem.Review[] open reviews, oldest first
M.open = {}

--- The review shown in `buf` (default: the current buffer), else the newest.
---@param buf integer?
---@return elelem.Review?
function M.find(buf)
  buf = buf or api.nvim_get_current_buf()
  for _, r in ipairs(M.open) do
    if r.buf == buf then
      return r
    end
  end
  return M.open[#M.open]
end

--- `path` as the chat shows it (relative to the session's folder when inside it).
--- A hunk's mark, as the review split and the chat show it: `  hunk N [state]` and its highlight.
---@param id integer
---@param state boolean? true accepted, false rejected, nil pending
---@return string[]
function M.mark_of(id, state)
  local label, hl = "[pending]", "DiagnosticWarn"
  if state == true then
    label, hl = "[accepted]", "DiagnosticOk"
  elseif state == false then
    label, hl = "[rejected]", "DiagnosticError"
  end
  return { ("  hunk %d %s"):format(id, label), hl }
end

M.shown_path = function(path)
  return require("elelem.buffers").shown(path)
end

--- The help line of a review buffer, from the configured keys.
---@return string
local function help()
  local k = config.options.review.keys
  return ("%s/%s accept/reject hunk · %s/%s all · %s accept all this turn · %s/%s next/prev · q hide"):format(
    k.accept, k.reject, k.accept_all, k.reject_all, k.accept_turn, k.next, k.prev)
end

---@param hunk table
---@return string[]
local function hunk_lines(hunk)
  local text = type(hunk.diff) == "string" and hunk.diff or ""
  text = text:gsub("\n$", "")
  local lines = vim.split(text, "\n", { plain = true })
  for i, line in ipairs(lines) do
    lines[i] = line:gsub("[\r\n]", "")
  end
  return lines
end

function Review:mark()
  if not api.nvim_buf_is_valid(self.buf) then
    return
  end
  api.nvim_buf_clear_namespace(self.buf, ns, 0, -1)
  for _, hunk in ipairs(self.params.hunks) do
    api.nvim_buf_set_extmark(self.buf, ns, self.rows[hunk.id], 0, {
      virt_text = { M.mark_of(hunk.id, self.decided[hunk.id]) },
      virt_text_pos = "eol",
    })
  end
  M.on_mark(self)
end

--- The hunk whose lines hold the cursor (or the first).
---@return integer? id
function Review:current()
  local row = self.win and api.nvim_win_is_valid(self.win) and api.nvim_win_get_buf(self.win) == self.buf
      and api.nvim_win_get_cursor(self.win)[1] - 1
    or 0
  local found = self.params.hunks[1] and self.params.hunks[1].id
  for _, hunk in ipairs(self.params.hunks) do
    if self.rows[hunk.id] <= row then
      found = hunk.id
    end
  end
  return found
end

--- Ends the review with `decision` (once): the window closes, `done` is called.
---@param decision elelem.Decision
function Review:finish(decision)
  if self.finished then
    return
  end
  self.finished = true
  if self.target and api.nvim_buf_is_valid(self.target) then
    api.nvim_buf_clear_namespace(self.target, ns, 0, -1)
  end
  for i, r in ipairs(M.open) do
    if r == self then
      table.remove(M.open, i)
      break
    end
  end
  local focused = self.win and api.nvim_win_is_valid(self.win) and api.nvim_get_current_win() == self.win
  if api.nvim_buf_is_valid(self.buf) then
    pcall(api.nvim_buf_delete, self.buf, { force = true })
  end
  if focused and self.back and api.nvim_win_is_valid(self.back) then
    pcall(api.nvim_set_current_win, self.back)
  end
  self.done(decision)
  M.on_mark(self)
  M.on_change()
end

--- The decision made so far (undecided hunks count as rejected).
---@return integer[]
function Review:accepted()
  local ids = {}
  for _, hunk in ipairs(self.params.hunks) do
    if self.decided[hunk.id] then
      table.insert(ids, hunk.id)
    end
  end
  return ids
end

--- Decides hunk `id` (nil: the one under the cursor); ends the review once all are.
---@param accept boolean
---@param id integer?
function Review:decide(accept, id)
  id = id or self:current()
  if not id then
    return
  end
  self.decided[id] = accept
  self:mark()
  for _, hunk in ipairs(self.params.hunks) do
    if self.decided[hunk.id] == nil then
      return self:move(1, true)
    end
  end
  self:finish({ accepted = self:accepted() })
end

--- Decides every hunk at once.
---@param accept boolean
---@param opts {reason: string?, turn: boolean?}?
function Review:all(accept, opts)
  opts = opts or {}
  for _, hunk in ipairs(self.params.hunks) do
    self.decided[hunk.id] = accept
  end
  self:finish({ accepted = self:accepted(), reason = opts.reason, acceptAllForTurn = opts.turn or nil })
end

---@param r elelem.Review
local function keymaps(r)
  local k = config.options.review.keys
  local function map(lhs, fn, desc)
    if lhs and lhs ~= "" then
      vim.keymap.set("n", lhs, fn, { buffer = r.buf, nowait = true, desc = "elelem review: " .. desc })
    end
  end
  map(k.accept, function()
    r:decide(true)
  end, "accept this hunk")
  map(k.reject, function()
    r:decide(false)
  end, "reject this hunk")
  map(k.accept_all, function()
    r:all(true)
  end, "accept every hunk")
  map(k.reject_all, function()
    r:all(false)
  end, "reject every hunk")
  map(k.accept_turn, function()
    r:all(true, { turn = true })
  end, "accept this and every later change of this turn")
  map(k.next, function()
    r:move(1)
  end, "next hunk")
  map(k.prev, function()
    r:move(-1)
  end, "previous hunk")
  map("q", function()
    r:hide()
  end, "hide the review (it stays pending: :ElelemReview shows it again)")
end

--- Opens the review of a `files/propose` (review: true) in a split under the file's window
--- (else under the layout), without the focus; `done(decision)` is called once.
---@param params table
---@param opened boolean the editor has the file loaded (else the daemon writes the disk)
---@param done fun(decision: elelem.Decision)
---@return elelem.Review
function M.start(params, opened, done)
  local buf = api.nvim_create_buf(false, true)
  local r = setmetatable({ params = params, buf = buf, rows = {}, decided = {}, done = done, finished = false }, Review)
  local hunks = params.hunks
  local lines = {
    ("elelem review: %s%s · %d hunk%s"):format(M.shown_path(params.path), (params.oldText == nil or params.oldText == vim.NIL)
      and " (new file)" or opened and "" or " (not open: written to disk on accept)", #hunks, #hunks == 1 and "" or "s"),
    help(),
    "",
  }
  for _, hunk in ipairs(hunks) do
    r.rows[hunk.id] = #lines
    vim.list_extend(lines, hunk_lines(hunk))
  end
  api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].bufhidden = "hide" -- `q` hides it; it is wiped when the review ends
  vim.bo[buf].filetype = "diff"
  require("elelem.buffers").name(buf, ("elelem://review/%s/%s"):format(tostring(params.toolCallId), M.shown_path(params.path)))
  vim.b[buf].elelem_review = true
  keymaps(r)
  api.nvim_create_autocmd("BufWipeout", {
    buffer = buf,
    once = true,
    callback = function()
      vim.schedule(function()
        r:finish({ accepted = {}, closed = true, reason = "the user closed the review" })
      end)
    end,
  })
  table.insert(M.open, r)
  -- under a window that shows the file, else under the whole layout
  r.target = opened and require("elelem.buffers").find(params.path) or nil
  r.height = math.max(6, math.min(#lines + 1, math.floor(vim.o.lines * 0.5)))
  r:window()
  r:mark_target()
  M.on_open(r)
  pcall(vim.cmd.redraw)
  return r
end

--- Called when a review opens (set by elelem.init: the notification and the chat line).
---@type fun(r: elelem.Review)
M.on_open = function() end
--- Called when a hunk's state changes (the chat's copy of the marks).
---@type fun(r: elelem.Review)
M.on_mark = function() end
--- Called when the open reviews change (the statusline mark).
---@type fun()
M.on_change = function() end

require("elelem.review_window").extend(Review, M) -- its window: shown, hidden, entered, moved in

--- Closes every open review of `session_id` (its turn ended or the daemon withdrew it).
---@param session_id string?
function M.dismiss(session_id)
  for _, r in ipairs(vim.list_slice(M.open)) do
    if session_id == nil or r.params.sessionId == session_id then
      r:finish({ accepted = {}, closed = true })
    end
  end
end

return M
