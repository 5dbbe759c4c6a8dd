--- Questions in the chat (issue 31, `setup({ questions = "chat" })`, the default): where the
--- user is looking, without a modal and without the keyboard.
---
--- - A question with options (`input/ask`: a permission, an `interview` with choices, a
---   confirm) is a block of lines in the chat, one per answer. `<CR>` on an answer line (in
---   the chat buffer) sends it: moving there is the user's step, `<CR>` the decision.
---   `:ElelemAnswer [answer]` answers from anywhere (without an answer it moves the cursor to
---   the first one). A question without options is answered with `:ElelemAnswer {text}`
---   (the built-in `vim.ui.input` would take the keys being typed elsewhere).
--- - A review's hunks are shown in the chat too, each a `diff` block; in the chat buffer
---   `ga`/`gr` (the review keys) on a hunk's lines accept/reject it, `gA`/`gR` all, and
---   `<CR>` on the review's line opens the review split.
--- Nothing here is a global key: keys typed in the prompt area or a file never reach it.
local config = require("elelem.config")

local M = {}

local api = vim.api
local ns = api.nvim_create_namespace("elelem.chatask")

---@class elelem.ChatQuestion
---@field session table
---@field params table
---@field options string[]
---@field rows integer[] extmark ids of the answer lines, in `options` order
---@field done fun(answer: string?)

---@type elelem.ChatQuestion[] open questions, oldest first
M.open = {}

---@type table<elelem.Review, {session: table, head: integer, hunks: table<integer, integer>}> review -> its chat marks
local reviews = {}

--- True when questions go to the chat (the default), false for `vim.ui` (the old path).
---@return boolean
function M.enabled()
  return config.options.questions == "chat"
end

--- One screen line for vim.notify (a longer one would wait for <Enter> and take the keys).
---@param text string
---@return string
local function short(text)
  text = text:gsub("%s+", " ")
  local room = math.max(20, vim.v.echospace - 1)
  if vim.fn.strdisplaywidth(text) > room then
    text = vim.fn.strcharpart(text, 0, room - 1) .. "…"
  end
  return text
end
M.short = short

local MAX_OPTIONS, MAX_WIDTH, MAX_LINES = 50, 300, 200

--- One chat line of the daemon's text: no control characters, at most MAX_WIDTH characters.
---@param text any
---@return string
local function clean(text)
  text = tostring(text):gsub("%c", " ")
  if vim.fn.strchars(text) > MAX_WIDTH then
    text = vim.fn.strcharpart(text, 0, MAX_WIDTH - 1) .. "…"
  end
  return text
end
M.clean = clean

---@param s table the session
local function redraw(s)
  s:show(nil) -- the chat windows, the focus left where it is
  pcall(vim.cmd.redrawstatus, { bang = true })
end

--- Asks `params` (with `options`) in `s`'s chat; `done(answer)` once answered (or given up).
---@param s table the session
---@param params table
---@param prompt string the question's text (its diff is in the chat already)
---@param options string[]
---@param done fun(answer: string?)
---@return elelem.ChatQuestion
function M.question(s, params, prompt, options, done)
  -- the daemon's text is bounded here: so many answers, so many lines, so wide
  options = vim.list_slice(options, 1, MAX_OPTIONS)
  local q = { session = s, params = params, options = options, rows = {}, done = done }
  local lines = {}
  for _, line in ipairs(vim.split(prompt, "\n", { plain = true })) do
    if #lines == MAX_LINES then
      table.insert(lines, "? …")
      break
    end
    table.insert(lines, "? " .. clean(line))
  end
  local first = s.chat:lines(lines, "ElelemReviewPending")
  local buf = s.chat:buffer()
  for _, option in ipairs(options) do
    local row = s.chat:lines({ "  → " .. clean(option) }, "ElelemTool")
    table.insert(q.rows, api.nvim_buf_set_extmark(buf, ns, row, 0, {}))
  end
  s.chat:lines({ #options > 0 and "  (<CR> on an answer sends it · :ElelemAnswer)"
    or "  (answer with :ElelemAnswer {your answer})" }, "ElelemDim")
  q.head = api.nvim_buf_set_extmark(buf, ns, first, 0, {})
  table.insert(M.open, q)
  redraw(s)
  vim.notify(short("elelem asks: " .. clean(prompt:gsub("\n.*", "")) .. " (answer in the chat)"), vim.log.levels.WARN)
  return q
end

--- Forgets question `q` (answered, dismissed or withdrawn): its keys no longer act.
---@param q elelem.ChatQuestion?
function M.close(q)
  for i, open in ipairs(M.open) do
    if open == q then
      table.remove(M.open, i)
      pcall(vim.cmd.redrawstatus, { bang = true })
      return
    end
  end
end

---@param buf integer
---@param mark integer
---@return integer?
local function row_of(buf, mark)
  local at = api.nvim_buf_get_extmark_by_id(buf, ns, mark, {})
  return at[1]
end

--- `<CR>` at `row` of chat buffer `buf`: answers the question whose answer line it is, or
--- opens the review whose line it is. True when it did something.
---@param buf integer
---@param row integer 0-based
---@return boolean
function M.enter(buf, row)
  for _, q in ipairs(M.open) do
    if q.session.chat.buf == buf then
      for i, mark in ipairs(q.rows) do
        if row_of(buf, mark) == row then
          M.close(q)
          q.done(q.options[i])
          return true
        end
      end
    end
  end
  for r, marks in pairs(reviews) do
    if marks.session.chat.buf == buf and row_of(buf, marks.head) == row and not r.finished then
      local review = require("elelem.review")
      return review.enter(r)
    end
  end
  return false
end

--- `:ElelemAnswer [answer]`: answers the newest question of this tab with `answer` (an
--- option's text, or its first letters when only one option starts so); without one, moves
--- the cursor to its first answer in the chat. False when none is open.
---@param answer string?
---@return boolean
function M.answer(answer)
  local s = require("elelem.session").current()
  local q
  for i = #M.open, 1, -1 do
    if M.open[i].session == s then
      q = M.open[i]
      break
    end
  end
  if not q then
    vim.notify("elelem: no question is waiting in this tab", vim.log.levels.INFO)
    return false
  end
  answer = vim.trim(answer or "")
  if #q.options == 0 then -- free text: the answer as typed
    if answer == "" then
      vim.notify("elelem: :ElelemAnswer {your answer}", vim.log.levels.INFO)
      return false
    end
    M.close(q)
    q.done(answer)
    return true
  end
  if answer == "" then
    s:show("chat")
    local row = row_of(s.chat:buffer(), q.rows[1])
    if row then
      api.nvim_win_set_cursor(0, { row + 1, 0 })
    end
    return true
  end
  local found
  for _, option in ipairs(q.options) do
    if option == answer then
      found = option
      break
    elseif vim.startswith(option, answer) then
      found = found == nil and option or false
    end
  end
  if not found then
    vim.notify(("elelem: answer one of: %s"):format(table.concat(q.options, ", ")), vim.log.levels.WARN)
    return false
  end
  M.close(q)
  q.done(found)
  return true
end

--- The options of this tab's newest question (for completion).
---@return string[]
function M.options()
  local s = require("elelem.session").current()
  for i = #M.open, 1, -1 do
    if M.open[i].session == s then
      return vim.deepcopy(M.open[i].options)
    end
  end
  return {}
end

--- A review opened: its hunks in the chat, each under its own mark, with the review keys.
---@param s table the session
---@param r elelem.Review
---@param where string the announcement
function M.review(s, r, where)
  local buf = s.chat:buffer()
  local head = s.chat:lines({ "▶ " .. where }, "ElelemReviewPending")
  local marks = { session = s, head = api.nvim_buf_set_extmark(buf, ns, head, 0, {}), hunks = {} }
  local k = config.options.review.keys
  s.chat:lines({ ("  (here: %s/%s accept/reject the hunk under the cursor · %s/%s all · <CR> on the line above opens the review)")
    :format(k.accept, k.reject, k.accept_all, k.reject_all) }, "ElelemDim")
  for _, hunk in ipairs(r.params.hunks) do
    local text = type(hunk.diff) == "string" and hunk.diff:gsub("\n$", "") or ""
    local lines = { "```diff" }
    local all = vim.split(text, "\n", { plain = true })
    for i, line in ipairs(all) do
      if i > MAX_LINES then -- the split shows it whole
        table.insert(lines, ("… %d more lines: :ElelemReview shows them"):format(#all - MAX_LINES))
        break
      end
      table.insert(lines, (line:gsub("[%z\1-\8\11-\31\127]", " ")))
    end
    table.insert(lines, "```")
    local row = s.chat:lines(lines)
    marks.hunks[hunk.id] = api.nvim_buf_set_extmark(buf, ns, row, 0, { end_row = row + #lines - 1 })
  end
  reviews[r] = marks
  M.mark(r)
end

--- The hunks' states beside their blocks in the chat.
---@param r elelem.Review
function M.mark(r)
  local marks = reviews[r]
  if not marks then
    return
  end
  local buf = marks.session.chat.buf
  if not (buf and api.nvim_buf_is_valid(buf)) then
    return
  end
  for _, hunk in ipairs(r.params.hunks) do
    local row = row_of(buf, marks.hunks[hunk.id])
    if row then
      local state = r.decided[hunk.id]
      local label, hl = "[pending]", "DiagnosticWarn"
      if state == true then
        label, hl = "[accepted]", "DiagnosticOk"
      elseif state == false then
        label, hl = "[rejected]", "DiagnosticError"
      end
      api.nvim_buf_set_extmark(buf, ns, row, 0, {
        id = marks.hunks[hunk.id],
        end_row = api.nvim_buf_get_extmark_by_id(buf, ns, marks.hunks[hunk.id], { details = true })[3].end_row,
        virt_text = { { ("  hunk %d %s"):format(hunk.id, label), hl } },
        virt_text_pos = "eol",
      })
    end
  end
  if r.finished then
    reviews[r] = nil
  end
end

--- A review key pressed in chat buffer `buf` at `row`: decides the hunk (or all) of the
--- review whose block holds the row. True when it did.
---@param buf integer
---@param row integer 0-based
---@param action "accept"|"reject"|"accept_all"|"reject_all"
---@return boolean
function M.key(buf, row, action)
  for r, marks in pairs(reviews) do
    if marks.session.chat.buf == buf and not r.finished then
      local head = row_of(buf, marks.head)
      for _, hunk in ipairs(r.params.hunks) do
        local at = api.nvim_buf_get_extmark_by_id(buf, ns, marks.hunks[hunk.id], { details = true })
        local inside = at[1] and row >= at[1] and row <= (at[3].end_row or at[1])
        if inside or (head and row == head and action:match("_all$")) then
          if action == "accept_all" or action == "reject_all" then
            r:all(action == "accept_all")
          else
            r:decide(action == "accept", hunk.id)
          end
          return true
        end
      end
    end
  end
  return false
end

return M
