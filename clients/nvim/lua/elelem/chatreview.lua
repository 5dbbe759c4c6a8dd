--- A review's hunks in the chat (issue 31, `questions = "chat"`): each a `diff` block under
--- the review's line, its state beside it. In the chat buffer `ga`/`gr` (the review keys)
--- on a hunk's lines accept/reject it, `gA`/`gR` on the review's line decide all, and
--- `<CR>` on that line opens the review split. Keys elsewhere never reach it.
local chatask = require("elelem.chatask")
local config = require("elelem.config")

local M = {}

local api = vim.api
local ns = api.nvim_create_namespace("elelem.chatask")
local row_of = chatask.row_of
local MAX_LINES = chatask.MAX_LINES

---@type table<elelem.Review, {session: table, head: integer, hunks: table<integer, integer>}> review -> its chat marks
local reviews = {}

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
      api.nvim_buf_set_extmark(buf, ns, row, 0, {
        id = marks.hunks[hunk.id],
        end_row = api.nvim_buf_get_extmark_by_id(buf, ns, marks.hunks[hunk.id], { details = true })[3].end_row,
        virt_text = { require("elelem.review").mark_of(hunk.id, r.decided[hunk.id]) },
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

--- `<CR>` at `row` of chat buffer `buf`: opens the review whose line it is. True when it did.
---@param buf integer
---@param row integer 0-based
---@return boolean
function M.enter(buf, row)
  for r, marks in pairs(reviews) do
    if marks.session.chat.buf == buf and row_of(buf, marks.head) == row and not r.finished then
      return require("elelem.review").enter(r)
    end
  end
  return false
end

return M
