--- Questions in the chat (issue 31, `setup({ questions = "chat" })`, the default): where the
--- user is looking, without a modal and without the keyboard.
---
--- - A question with options (`input/ask`: a permission, an `interview` with choices, a
---   confirm) is a block of lines in the chat, one per answer, numbered. No motion answers
---   it (issue 40: `<CR>` moving down the chat passed `→ allow` and ran the command):
---   `A` in the chat buffer, or `:ElelemAnswer` from anywhere, opens a picker of the
---   answers (`vim.ui.select`); `:ElelemAnswer allow` answers at once. `<CR>`, `j`, `G`, a
---   search or a click only move. A question without options is answered with
---   `:ElelemAnswer {text}` (the built-in `vim.ui.input` would take the keys being typed
---   elsewhere).
--- - A review's hunks are shown in the chat too (elelem.chatreview).
--- Nothing here is a global key: keys typed in the prompt area or a file never reach it.
local config = require("elelem.config")

local M = {}

local api = vim.api
local ns = api.nvim_create_namespace("elelem.chatask")

---@class elelem.ChatQuestion
---@field session table
---@field params table
---@field options string[]
---@field prompt string
---@field rows integer[] extmark ids of the answer lines, in `options` order
---@field done fun(answer: string?)

---@type elelem.ChatQuestion[] open questions, oldest first
M.open = {}

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

local MAX_OPTIONS, MAX_WIDTH, MAX_LINES = 50, 2000, 200 -- a URL to open stays whole

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
M.MAX_LINES = MAX_LINES

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
  local q = { session = s, params = params, prompt = prompt, options = options, rows = {}, done = done }
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
  for i, option in ipairs(options) do
    local row = s.chat:lines({ ("  %d → %s"):format(i, clean(option)) }, "ElelemTool")
    table.insert(q.rows, api.nvim_buf_set_extmark(buf, ns, row, 0, {}))
  end
  s.chat:lines({ #options > 0 and "  (answer: A in the chat, or :ElelemAnswer [answer])"
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
function M.row_of(buf, mark)
  local at = api.nvim_buf_get_extmark_by_id(buf, ns, mark, {})
  return at[1]
end

--- `<CR>` at `row` of chat buffer `buf`: opens the review whose line it is (a question's
--- answer line is not a decision: `<CR>` only moves there). True when it did something.
---@param buf integer
---@param row integer 0-based
---@return boolean
function M.enter(buf, row)
  return require("elelem.chatreview").enter(buf, row)
end

--- The picker of question `q`'s answers: an explicit choice, never a motion.
---@param q elelem.ChatQuestion
local function pick(q)
  local items = {}
  for i, option in ipairs(q.options) do
    items[i] = { index = i, option = option }
  end
  vim.ui.select(items, {
    prompt = "elelem asks: " .. clean((q.prompt:gsub("\n.*", ""))),
    kind = "elelem.answer",
    format_item = function(item)
      return clean(item.option)
    end,
  }, function(choice)
    if choice and vim.tbl_contains(M.open, q) then
      M.close(q)
      q.done(choice.option)
    end
  end)
end

--- `A` in chat buffer `buf`: the picker of the newest question open there. True if one was.
---@param buf integer
---@return boolean
function M.pick_in(buf)
  for i = #M.open, 1, -1 do
    local q = M.open[i]
    if q.session.chat.buf == buf and #q.options > 0 then
      pick(q)
      return true
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
    s:show(nil) -- the question in view, the focus where it was
    pick(q)
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

return M
