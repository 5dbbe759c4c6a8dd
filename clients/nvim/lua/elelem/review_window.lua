--- The review split's window (elelem.review): shown without the focus, hidden by `q`,
--- entered by `:ElelemReview`, and the cursor moved between hunks, the file's window
--- following only once the user is in the review.
local M = {}

local api = vim.api
local ns = api.nvim_create_namespace("elelem.review")

--- Adds the window methods to `Review` and `enter` to the module `R` (elelem.review).
---@param Review table
---@param R table
function M.extend(Review, R)
  --- Moves the cursor to the next (`step` 1) or previous (-1) hunk header.
  ---@param step integer
  ---@param pending boolean? only undecided hunks
  function Review:move(step, pending)
    if not (self.win and api.nvim_win_is_valid(self.win)) then
      return
    end
    local row = api.nvim_win_get_cursor(self.win)[1] - 1
    local hunks = self.params.hunks
    local from, to = 1, #hunks
    if step < 0 then
      from, to = #hunks, 1
    end
    for i = from, to, step do
      local hunk = hunks[i]
      local r = self.rows[hunk.id]
      if ((step > 0 and r > row) or (step < 0 and r < row)) and (not pending or self.decided[hunk.id] == nil) then
        return self:go(hunk)
      end
    end
    if pending then -- wrap around to the first undecided one
      for _, hunk in ipairs(hunks) do
        if self.decided[hunk.id] == nil then
          return self:go(hunk)
        end
      end
    end
  end

  --- Puts the cursor on `hunk`'s header, and, when the user is in the review, the file's
  --- window (if one shows it) on its lines (never while the user works elsewhere).
  ---@param hunk table
  function Review:go(hunk)
    api.nvim_win_set_cursor(self.win, { self.rows[hunk.id] + 1, 0 })
    local file = api.nvim_get_current_win() == self.win and self.target and api.nvim_buf_is_valid(self.target)
      and vim.fn.win_findbuf(self.target)[1]
    if file then
      local line = math.max(1, math.min(math.max(hunk.oldStart, 1), api.nvim_buf_line_count(self.target)))
      pcall(api.nvim_win_set_cursor, file, { line, 0 })
      api.nvim_win_call(file, function()
        vim.cmd("normal! zz")
      end)
    end
  end

  --- Marks each hunk's lines in the file's buffer (`ElelemReviewLines`, and `hunk N` beside
  --- its first line) while the review is open.
  function Review:mark_target()
    local buf = self.target
    if not (buf and api.nvim_buf_is_valid(buf)) then
      return
    end
    local count = api.nvim_buf_line_count(buf)
    for _, hunk in ipairs(self.params.hunks) do
      local first = math.min(math.max(hunk.oldStart - 1, 0), count - 1)
      local last = math.min(first + math.max(hunk.oldLines, 1) - 1, count - 1)
      pcall(api.nvim_buf_set_extmark, buf, ns, first, 0, {
        end_row = last,
        line_hl_group = "ElelemReviewLines",
        virt_text = { { ("  ◀ hunk %d under review"):format(hunk.id), "ElelemDim" } },
        virt_text_pos = "eol",
      })
    end
  end

  --- Shows the review's split (again) without taking the focus: under a window of the file's
  --- in this tab, else under the whole layout.
  function Review:window()
    if self.win and api.nvim_win_is_valid(self.win) and api.nvim_win_get_buf(self.win) == self.buf then
      return self.win
    end
    local beside = self.target and api.nvim_buf_is_valid(self.target) and vim.fn.win_findbuf(self.target)[1]
    local target = beside and api.nvim_win_get_tabpage(beside) == api.nvim_get_current_tabpage() and beside or -1
    self.win = api.nvim_open_win(self.buf, false, { split = "below", win = target, height = self.height })
    vim.wo[self.win].winfixheight = true
    vim.wo[self.win].wrap = false
    vim.wo[self.win].foldenable = false
    local first = self.params.hunks[1]
    for _, hunk in ipairs(self.params.hunks) do
      if self.decided[hunk.id] == nil then
        first = hunk
        break
      end
    end
    if first then
      self:go(first)
      api.nvim_win_call(self.win, function()
        vim.fn.winrestview({ topline = 1 }) -- the title and the keys stay in view
      end)
    end
    self:mark()
    return self.win
  end

  --- Hides the split (`q`); the review stays pending.
  function Review:hide()
    if self.win and api.nvim_win_is_valid(self.win) then
      local back = self.back and api.nvim_win_is_valid(self.back) and self.back
      pcall(api.nvim_win_close, self.win, false)
      if back then
        pcall(api.nvim_set_current_win, back)
      end
    end
    self.win = nil
    R.on_change()
  end

  --- `:ElelemReview`: moves into review `r` (default: the newest open one), shown again if
  --- hidden; the user's deliberate step, the only way a review gets the keyboard. False when
  --- none is open.
  ---@param r elelem.Review?
  ---@return boolean
  function R.enter(r)
    r = r or R.open[#R.open]
    if not r then
      return false
    end
    local from = api.nvim_get_current_win()
    if from ~= r.win then
      r.back = from
    end
    if vim.fn.mode():match("^[iR]") then
      vim.cmd.stopinsert() -- the user asked to go there: review keys are normal-mode keys
    end
    api.nvim_set_current_win(r:window())
    local id = r:current()
    for _, hunk in ipairs(r.params.hunks) do
      if hunk.id == id then
        r:go(hunk) -- the file's window follows now that the user is here
      end
    end
    R.on_change()
    return true
  end
end

return M
