--- What Undo and Rewind do to the buffers (issue 31): the disk is restored by the daemon;
--- a buffer of a restored file follows it without losing the user's own unsaved edits.
---
--- Before the rewind, `snapshot` keeps each affected buffer's text (the user's) and the
--- disk's (the agent's). After it, `apply` reloads a buffer with no unsaved change; one with
--- unsaved edits gets the restored file with those edits merged back (a three-way merge:
--- base the disk before, "mine" the buffer, "theirs" the restored file), as one undo step
--- on top of the reload. Where both touched the same lines, the user is asked once, the
--- lines named: keep theirs (the buffer's lines) or take the restored ones.
local buffers = require("elelem.buffers")

local M = {}

local api = vim.api

---@class elelem.Applied an agent's change that landed in a buffer with unsaved edits (so not on disk)
---@field session string
---@field buf integer
---@field path string
---@field before string the buffer's text before it
---@field after string and after
---@field turn integer? the turn's id, once its `session/turn` answered

---@type elelem.Applied[] oldest first
M.applied = {}

--- Notes an agent's change applied to a buffer and not written (its unsaved edits are the
--- user's): a rewind of its turn takes it out of the buffer, since the disk never had it.
---@param session string
---@param buf integer
---@param path string
---@param before string
---@param after string
function M.note(session, buf, path, before, after)
  if before ~= after then
    table.insert(M.applied, { session = session, buf = buf, path = path, before = before, after = after })
  end
end

--- A turn of `session` answered: its notes get its id.
---@param session string
---@param turn integer
function M.turn_ended(session, turn)
  for _, a in ipairs(M.applied) do
    if a.session == session and a.turn == nil then
      a.turn = turn
    end
  end
end

---@class elelem.Kept
---@field buf integer
---@field path string absolute
---@field mine string the buffer's text
---@field base string? the disk's text before the rewind (nil: no file)

---@param path string
---@return string?
local function read(path)
  local fd = io.open(path, "rb")
  if not fd then
    return nil
  end
  local text = fd:read("*a")
  fd:close()
  return text
end

--- `text` split into lines, each with its "\n" (the last may lack it).
---@param text string
---@return string[]
local function lines_of(text)
  local out = {}
  for line in text:gmatch("[^\n]*\n?") do
    if line ~= "" then
      table.insert(out, line)
    end
  end
  return out
end

---@class elelem.Hunk
---@field lo integer 0-based first base line replaced
---@field hi integer 0-based end (exclusive); lo == hi: an insertion before lo
---@field lines string[] the replacement
---@field first integer 1-based first line in the changed text (for naming it)
---@field count integer lines in the changed text

--- The hunks that turn `base` into `other`.
---@param base string
---@param other string
---@return elelem.Hunk[]
local function hunks(base, other)
  local b = lines_of(other)
  local out = {}
  local ok, found = pcall(vim.diff, base, other, { result_type = "indices" })
  for _, h in ipairs(ok and found or {}) do
    local sa, ca, sb, cb = h[1], h[2], h[3], h[4]
    local lo = ca > 0 and sa - 1 or sa
    local hunk = { lo = lo, hi = lo + ca, lines = {}, first = cb > 0 and sb or sb + 1, count = cb }
    for i = 0, cb - 1 do
      table.insert(hunk.lines, b[sb + i])
    end
    table.insert(out, hunk)
  end
  return out
end

---@param a elelem.Hunk
---@param b elelem.Hunk
---@return boolean
local function touch(a, b)
  return a.lo <= b.hi and b.lo <= a.hi
end

--- Merges `mine` and `theirs`, both made from `base`. Returns the text and the user's
--- line ranges (in `mine`) that clash with `theirs`, and a function that gives the text
--- with the clashes decided: `keep_mine` true keeps the user's lines there.
---@param base string
---@param mine string
---@param theirs string
---@return {first: integer, last: integer}[] clashes
---@return fun(keep_mine: boolean): string
function M.merge(base, mine, theirs)
  local ours, others = hunks(base, mine), hunks(base, theirs)
  local clashes, clashing = {}, {}
  for _, u in ipairs(ours) do
    for _, r in ipairs(others) do
      if touch(u, r) then
        clashing[u], clashing[r] = true, true
      end
    end
    if clashing[u] then
      table.insert(clashes, { first = u.first, last = u.first + math.max(u.count, 1) - 1 })
    end
  end
  local function result(keep_mine)
    local chosen = {}
    for _, u in ipairs(ours) do
      if not clashing[u] or keep_mine then
        table.insert(chosen, u)
      end
    end
    for _, r in ipairs(others) do
      if not clashing[r] or not keep_mine then
        table.insert(chosen, r)
      end
    end
    table.sort(chosen, function(x, y)
      return x.lo > y.lo or (x.lo == y.lo and x.hi > y.hi)
    end)
    local lines = lines_of(base)
    for _, h in ipairs(chosen) do -- last first, so earlier places stay
      for _ = h.lo + 1, h.hi do
        table.remove(lines, h.lo + 1)
      end
      for i, line in ipairs(h.lines) do
        table.insert(lines, h.lo + i, line)
      end
    end
    return table.concat(lines)
  end
  return clashes, result
end

--- Keeps the text of each loaded buffer of `paths` (absolute) that has unsaved changes.
---@param paths string[]
---@return elelem.Kept[]
function M.snapshot(paths)
  local kept = {}
  for _, path in ipairs(paths) do
    local buf = buffers.find(path)
    if buf and vim.bo[buf].modified then
      table.insert(kept, { buf = buf, path = path, mine = buffers.text(buf), base = read(path) })
    end
  end
  return kept
end

---@param buf integer
local function reload(buf)
  api.nvim_buf_call(buf, function()
    vim.cmd("silent edit!")
  end)
end

---@param ranges {first: integer, last: integer}[]
---@return string
local function named(ranges)
  local parts = {}
  for _, r in ipairs(ranges) do
    table.insert(parts, r.first == r.last and tostring(r.first) or ("%d–%d"):format(r.first, r.last))
  end
  return table.concat(parts, ", ")
end

--- After the rewind: every loaded buffer of `paths` shows the restored file, the unsaved
--- edits of `kept` merged back; the agent's changes of the `dropped` turns of `session`
--- that only ever were in a buffer are taken out of it. `done(notes)` gets one line per
--- merged buffer.
---@param paths string[]
---@param kept elelem.Kept[]
---@param done fun(notes: string[])?
---@param dropped {session: string?, turns: integer[]}?
function M.apply(paths, kept, done, dropped)
  local by_buf = {}
  for _, k in ipairs(kept) do
    by_buf[k.buf] = k
  end
  local notes, questions = {}, {}
  for _, path in ipairs(paths) do
    local buf = buffers.find(path)
    local k = buf and by_buf[buf]
    local theirs = read(path)
    if buf and theirs and k and k.base and k.mine ~= k.base then
      reload(buf) -- the restored file, clean; then the user's edits on top, one undo step
      local clashes, result = M.merge(k.base, k.mine, theirs)
      if #clashes == 0 then
        buffers.set(buf, result(true))
        table.insert(notes, ("%s: your unsaved edits kept (not saved)"):format(buffers.shown(path)))
      else
        table.insert(questions, { buf = buf, path = path, clashes = clashes, result = result })
      end
    elseif buf and theirs and not (k and k.base == nil) then
      reload(buf)
    end
  end
  -- the agent's changes kept in a buffer only (it had unsaved edits): undone there, newest first
  local asked, gone = {}, {}
  for _, q in ipairs(questions) do
    asked[q.buf] = true
  end
  for _, turn in ipairs(dropped and dropped.turns or {}) do
    gone[turn] = true
  end
  for i = #M.applied, 1, -1 do
    local a = M.applied[i]
    if dropped and a.session == dropped.session and a.turn and gone[a.turn] then
      table.remove(M.applied, i)
      -- a buffer saved since has the change on disk: the restore above took it out
      if by_buf[a.buf] and not asked[a.buf] and api.nvim_buf_is_valid(a.buf) then
        local clashes, result = M.merge(a.after, buffers.text(a.buf), a.before)
        if #clashes == 0 then
          buffers.set(a.buf, result(true))
          table.insert(notes, ("%s: the agent's change taken out of the buffer, your unsaved edits kept")
            :format(buffers.shown(a.path)))
        else
          table.insert(questions, { buf = a.buf, path = a.path, clashes = clashes, result = result })
        end
      end
    end
  end
  pcall(vim.cmd.checktime)
  local function ask(i)
    local q = questions[i]
    if not q then
      return done and done(notes)
    end
    local prompt = ("%s: your unsaved edits and the undone change both touch line%s %s (of your text).")
      :format(buffers.shown(q.path), (#q.clashes > 1 or q.clashes[1].first ~= q.clashes[1].last) and "s" or "",
        named(q.clashes))
    local keep, take = "keep my lines there", "take the restored lines"
    vim.ui.select({ keep, take }, { prompt = prompt, kind = "elelem.merge" }, function(choice)
      local mine = choice ~= take -- dismissed: nothing of the user's is lost
      if api.nvim_buf_is_valid(q.buf) then
        buffers.set(q.buf, q.result(mine))
      end
      table.insert(notes, ("%s: lines %s %s"):format(buffers.shown(q.path), named(q.clashes),
        mine and "kept as you typed them (not saved)" or "restored; your other unsaved edits kept"))
      ask(i + 1)
    end)
  end
  ask(1)
end

return M
