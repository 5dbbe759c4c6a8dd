--- A rewind's plan in words (protocol.md `session/rewind`): what a dry run or a rewind
--- restores, brings back, deletes (each file by the turn that created it), leaves as it is
--- and why, and the user's files it would lose. Turns are named as the user counts them
--- (`session/checkpoints`' `number`), given as a turnId -> number map.
local buffers = require("elelem.buffers")

local M = {}

---@param list any
---@return string[]
local function strings(list)
  local out = {}
  for _, item in ipairs(type(list) == "table" and list or {}) do
    table.insert(out, tostring(item))
  end
  return out
end

--- The files a plan touches (restored, created, deleted), as given (relative to `cwd`).
---@param plan table a rewind result or dry run
---@return string[]
local function touched(plan)
  local files = type(plan.files) == "table" and plan.files or {}
  local out = {}
  for _, key in ipairs({ "restored", "created", "deleted" }) do
    vim.list_extend(out, strings(files[key]))
  end
  return out
end

---@param path string
---@param cwd string?
---@return string
local function absolute(path, cwd)
  if path:sub(1, 1) == "/" or not cwd then
    return path
  end
  return vim.fs.joinpath(cwd, path)
end

--- The touched files whose buffer has unsaved changes.
---@param plan table
---@param cwd string?
---@return string[]
local function unsaved_buffers(plan, cwd)
  local out = {}
  for _, path in ipairs(touched(plan)) do
    local buf = buffers.find(absolute(path, cwd))
    if buf and vim.bo[buf].modified then
      table.insert(out, path)
    end
  end
  return out
end

--- A turn as the user counts them (`number` in `session/checkpoints`), by its `turnId`;
--- the id itself when the list does not hold it.
---@param numbers table<integer, integer>?
---@param turn any
---@return string
function M.label(numbers, turn)
  return tostring(numbers and numbers[turn] or turn)
end

--- turnId -> number, from a `session/checkpoints` list.
---@param list table[]
---@return table<integer, integer>
function M.numbers(list)
  local out = {}
  for _, t in ipairs(type(list) == "table" and list or {}) do
    if type(t) == "table" and type(t.turnId) == "number" and type(t.number) == "number" then
      out[t.turnId] = t.number
    end
  end
  return out
end

local WHY = { -- a `kept` entry's reason, as the terminal says it
  too_big = "over the size limit when turn %s began",
  nested = "inside a nested repository when turn %s began",
  ignored = "ignored when turn %s began",
  unlisted = "the checkpoint of turn %s could not list all it left out",
}

--- The files a rewind of `plan` would lose that the user changed (`outside` + `unsaved`):
--- what the confirmation names, and what `confirm` sends.
---@param plan table
---@return string[]
function M.lost(plan)
  local files = type(plan.files) == "table" and plan.files or {}
  local out, seen = {}, {}
  for _, key in ipairs({ "outside", "unsaved" }) do
    for _, path in ipairs(strings(files[key])) do
      if not seen[path] then
        seen[path] = true
        table.insert(out, path)
      end
    end
  end
  return out
end

--- What a plan (a dry run's result, or `tool.plan` of a `/undo` question) will do, as lines.
--- Turns are named as the user counts them (`numbers`: turnId -> number).
---@param plan table
---@param cwd string?
---@param numbers table<integer, integer>?
---@return string[]
function M.describe(plan, cwd, numbers)
  local lines = {}
  local files = type(plan.files) == "table" and plan.files or nil
  local function list(label_, items)
    items = strings(items)
    if #items > 0 then
      table.insert(lines, ("%s: %s"):format(label_, table.concat(items, ", ")))
    end
  end
  if files then
    list("restores", files.restored)
    list("brings back", files.created)
    -- each deleted file by the turn that created it (`createdBy`), oldest turn first
    local made = type(files.createdBy) == "table" and files.createdBy or {}
    local by, order, others = {}, {}, {}
    for _, path in ipairs(strings(files.deleted)) do
      local turn = made[path]
      if type(turn) == "number" then
        if not by[turn] then
          by[turn] = {}
          table.insert(order, turn)
        end
        table.insert(by[turn], path)
      else
        table.insert(others, path)
      end
    end
    table.sort(order)
    for _, turn in ipairs(order) do
      list(("deletes, created by turn %s"):format(M.label(numbers, turn)), by[turn])
    end
    list("deletes, made since but not by the agent's turns", others)
    list("folders made again", files.dirsCreated)
    list("folders removed", files.dirsRemoved)
    if #touched(plan) == 0 then
      table.insert(lines, "no file changes")
    end
    list("YOU LOSE your edits to (changed outside the agent since)", files.outside)
    list("YOU LOSE the current content of (no checkpoint holds it)", files.unsaved)
    list("left by the agent in an editor buffer (reloaded from the disk)", files.buffers)
    list("left as they are (not saved)", files.uncovered)
    local reasons, why_order = {}, {}
    for _, entry in ipairs(type(files.kept) == "table" and files.kept or {}) do
      if type(entry) == "table" and entry.path ~= nil then
        local why = WHY[entry.reason] and WHY[entry.reason]:format(M.label(numbers, entry.turn)) or "not saved"
        if not reasons[why] then
          reasons[why] = {}
          table.insert(why_order, why)
        end
        table.insert(reasons[why], tostring(entry.path))
      end
    end
    for _, why in ipairs(why_order) do
      list(("left as they are (no checkpoint holds them), %s"):format(why), reasons[why])
    end
  end
  vim.list_extend(lines, M.unsaved(plan, cwd))
  local conversation = type(plan.conversation) == "table" and plan.conversation or nil
  if conversation then
    local dropped = {}
    for _, turn in ipairs(type(conversation.dropped) == "table" and conversation.dropped or {}) do
      table.insert(dropped, M.label(numbers, turn))
    end
    list("drops turns", dropped)
  end
  return lines
end

--- The line naming the plan's files whose buffer holds unsaved changes (none: no line).
---@param plan table
---@param cwd string?
---@return string[]
function M.unsaved(plan, cwd)
  local open = unsaved_buffers(plan, cwd)
  if #open == 0 then
    return {}
  end
  return { "unsaved changes kept (merged into the restored text): " .. table.concat(open, ", ") }
end

--- The touched files of `plan`, absolute.
---@param plan table
---@param cwd string?
---@return string[]
function M.paths(plan, cwd)
  return vim.tbl_map(function(path)
    return absolute(path, cwd)
  end, touched(plan))
end

return M
