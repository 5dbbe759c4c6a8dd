--- Checkpoints (issue 17, protocol.md `session/rewind`, docs/checkpoints.md): `:ElelemUndo`
--- rewinds the last turn, `:ElelemRewind [N]` picks one from `session/checkpoints` (turns
--- numbered as the user counts them: `number`, not the session's `turnId`). Each asks first:
--- a dry run's plan (what is restored, brought back, deleted and which turn created it, what
--- is left as it is and why, the user's files that would be lost, any unsaved buffer of those
--- files); then the rewind is sent with `confirm` naming exactly the files the user agreed to
--- lose, the affected buffers follow the restored files with the user's unsaved edits kept
--- (elelem.restore), and the chat is redrawn with the kept turns' tool calls and plan.
local restore = require("elelem.restore")
local daemon = require("elelem.daemon")
local errors = require("elelem.errors")
local session = require("elelem.session")
local wording = require("elelem.rewind_plan")

local M = {}

-- the plan in words, for ask.lua and init.lua too
M.describe, M.numbers, M.lost, M.unsaved, M.paths =
  wording.describe, wording.numbers, wording.lost, wording.unsaved, wording.paths
local label = wording.label

---@param message string
---@param level integer?
local function notify(message, level)
  vim.notify("elelem: " .. message, level or vim.log.levels.INFO)
end

--- Before a rewind of `plan` goes on: the unsaved text of its buffers (elelem.restore).
---@param plan table
---@param cwd string?
---@return elelem.Kept[]
function M.snapshot(plan, cwd)
  return restore.snapshot(M.paths(plan, cwd))
end

--- After it: the buffers follow the disk, unsaved edits kept; `done(notes)` after any question.
---@param plan table
---@param cwd string?
---@param kept elelem.Kept[]?
---@param done fun(notes: string[])?
---@param session string? the session whose turns `plan` drops
function M.reload(plan, cwd, kept, done, session)
  local conversation = type(plan.conversation) == "table" and plan.conversation or {}
  local turns = {}
  for _, turn in ipairs(type(conversation.dropped) == "table" and conversation.dropped or {}) do
    if type(turn) == "number" then
      table.insert(turns, turn)
    end
  end
  restore.apply(M.paths(plan, cwd), kept or {}, done, { session = session, turns = turns })
end

--- Redraws the chat from a conversation as it now is (`history`: the messages with the
--- tool calls between them, their diffs included; then the last plan), so the kept turns
--- show as they did.
---@param s elelem.Session
---@param result table a `session/rewind` or `session/load` result
function M.redraw(s, result)
  s.chat:clear()
  local drawn = s.chat:history(result.history or result.messages or {})
  if not drawn and type(result.plan) == "table" and type(result.plan.entries) == "table" then
    s.chat:plan(result.plan.entries)
  end
  require("elelem.mcp").redraw(s) -- the servers' states are still current
end

--- The message for a rewind error, by `data.kind`. `turn` is the turn as the user counts
--- them (the number shown), `numbers` names the ids in `data` the same way.
---@param err elelem.Error
---@param turn integer|string
---@param numbers table<integer, integer>?
---@return string
function M.explain(err, turn, numbers)
  local kind = errors.kind(err)
  local data = type(err.data) == "table" and err.data or {}
  if kind == "session_busy" then
    return "cannot rewind while a turn runs (in this session, or another in the same folder): try again when it ends"
  elseif kind == "unknown_turn" then
    return ("turn %s is no longer in the conversation (the list was stale): :ElelemRewind lists the turns again"):format(
      tostring(turn))
  elseif kind == "no_checkpoint" then
    local reasons = {
      disabled = "checkpoints are off (ELELEM_CHECKPOINTS=0)",
      pruned = "its checkpoint was pruned (retention)",
      failed = "its checkpoint failed when the turn ran",
      missing = "its checkpoint is gone or broken",
      tampered = "its checkpoint names another turn",
    }
    local reason = reasons[data.reason] or tostring(data.reason or "no checkpoint")
    return ("the files of turn %s cannot be rewound: %s"):format(tostring(turn), reason)
  elseif kind == "outside_changes" then
    local files = type(data.files) == "table" and M.lost({ files = data.files }) or {}
    return ("files changed outside the agent since turn %s: %s"):format(tostring(turn), table.concat(files, ", "))
  elseif kind == "checkpoint_failed" then
    return ("the restore failed (%s); nothing was changed"):format(tostring(data.reason or "error"))
  end
  return errors.message(err)
end

--- Asks yes/no with `lines` as the details; `cb(true)` on yes.
---@param lines string[]
---@param question string
---@param cb fun(yes: boolean)
local function confirm(lines, question, cb)
  local prompt = table.concat(vim.list_extend(vim.list_slice(lines), { question }), "\n")
  vim.ui.select({ "yes", "no" }, { prompt = prompt, kind = "elelem.confirm" }, function(choice)
    cb(choice == "yes")
  end)
end

local ASKS = 5 -- a user file that keeps changing under the question asks again at most this often

--- Rewinds session `s` to before turn `turn` (its `turnId`; files and conversation unless
--- `opts.files` is false). The user is shown the dry run's plan and asked; the rewind then
--- names, in `confirm`, exactly the files the user agreed to lose (never `force`): if one
--- more changed meanwhile, the daemon refuses and the new plan is shown and asked again.
---@param s elelem.Session
---@param turn integer
---@param opts {files: boolean?, numbers: table<integer, integer>?, asked: integer?}?
function M.rewind(s, turn, opts)
  opts = opts or {}
  local files = opts.files ~= false
  local numbers = opts.numbers or {}
  local shown = label(numbers, turn)
  if s.busy then
    return notify("cannot rewind while a turn runs: try again when it ends", vim.log.levels.WARN)
  end
  local cwd = s.info and s.info.cwd
  local params = { sessionId = s.id, turnId = turn, files = files, conversation = true }
  local epoch = s.epoch
  daemon.request("session/rewind", vim.tbl_extend("force", params, { dryRun = true }), function(err, plan)
    if epoch ~= s.epoch then
      return
    elseif err then
      if errors.kind(err) == "no_checkpoint" and files then
        return confirm({ M.explain(err, shown, numbers) }, "Rewind the conversation only?", function(yes)
          if yes then
            M.rewind(s, turn, { files = false, numbers = numbers })
          end
        end)
      end
      return notify(M.explain(err, shown, numbers), vim.log.levels.ERROR)
    end
    local lines = { ("Rewind to before turn %s%s:"):format(shown, files and "" or " (conversation only)") }
    if (opts.asked or 0) > 0 then
      table.insert(lines, "(your files changed since the last question: this is the plan now)")
    end
    vim.list_extend(lines, M.describe(plan, cwd, numbers))
    confirm(lines, "Go on?", function(yes)
      if not yes or epoch ~= s.epoch then
        return
      end
      local lost = M.lost(plan)
      local real = #lost > 0 and vim.tbl_extend("force", params, { confirm = lost }) or params
      local kept = M.snapshot(plan, cwd)
      daemon.request("session/rewind", real, function(rerr, result)
        if epoch ~= s.epoch then
          return
        elseif rerr and errors.kind(rerr) == "outside_changes" and (opts.asked or 0) < ASKS then
          -- a file of the user's changed after the plan was shown: show the new one, ask again
          return M.rewind(s, turn, vim.tbl_extend("force", opts, { asked = (opts.asked or 0) + 1 }))
        elseif rerr then
          return notify(M.explain(rerr, shown, numbers), vim.log.levels.ERROR)
        end
        M.redraw(s, result)
        local summary = M.describe(result, cwd, numbers)
        s.chat:notice(("(rewound to before turn %s%s)"):format(shown, #summary > 0 and (": " .. table.concat(summary, "; ")) or ""))
        s:refresh()
        M.reload(result, cwd, kept, function(notes)
          for _, note in ipairs(notes) do
            s.chat:notice("(" .. note .. ")")
          end
        end, s.id)
      end)
    end)
  end)
end

--- After `/undo` or `/rewind N` (a slash command that asked its confirm question and went
--- on): the buffers of `plan`'s files are reloaded and the chat redrawn from the conversation
--- as it now is (`session/context`), then the command's output.
---@param s elelem.Session
---@param plan table the question's `tool.plan`
---@param output string
---@param kept elelem.Kept[]? the buffers' unsaved text when the user said yes
function M.after(s, plan, output, kept)
  local cwd = s.info and s.info.cwd
  local epoch = s.epoch
  -- an open session's `session/load` describes it as it is now, tool calls and plan included
  daemon.request("session/load", { sessionId = s.id }, function(err, result)
    if epoch ~= s.epoch then
      return
    end
    local function after(whole)
      if whole then
        M.redraw(s, whole)
      end
      s.chat:output(output)
      M.reload(plan, cwd, kept, function(notes)
        for _, note in ipairs(notes) do
          s.chat:notice("(" .. note .. ")")
        end
      end, s.id)
    end
    if err or type(result) ~= "table" then
      return after(nil)
    end
    require("elelem.history").pages(result, function(whole) -- its older pages too
      if epoch == s.epoch then
        after(whole)
      end
    end)
  end)
end

--- The session's turns (`session/checkpoints`), oldest first.
---@param s elelem.Session
---@param cb fun(turns: table[])
local function turns(s, cb)
  if not s.id then
    return notify("this tab has no session yet: nothing to rewind")
  end
  daemon.request("session/checkpoints", { sessionId = s.id }, function(err, result)
    if err then
      return notify("cannot list the turns: " .. errors.message(err), vim.log.levels.ERROR)
    end
    local list = {}
    for _, t in ipairs(type(result) == "table" and type(result.turns) == "table" and result.turns or {}) do
      if type(t) == "table" and type(t.turnId) == "number" then
        table.insert(list, t)
      end
    end
    if #list == 0 then
      return notify("no turn to rewind")
    end
    cb(list)
  end)
end

--- A listed turn's number as the user counts them (its id on a daemon without `number`).
---@param t table
---@return integer
local function number_of(t)
  return type(t.number) == "number" and t.number or t.turnId
end

--- `:ElelemUndo`: rewinds the last turn.
function M.undo()
  local s = session.current()
  turns(s, function(list)
    M.rewind(s, list[#list].turnId, { numbers = M.numbers(list) })
  end)
end

---@param t table
---@return string
function M.format(t)
  local when = tostring(t.at or ""):gsub("T", " "):gsub("%.%d+", ""):gsub("Z$", ""):gsub("%+00:00$", "")
  local total = type(t.filesTotal) == "number" and t.filesTotal or 0
  local files = total > 0 and (" · %d file%s"):format(total, total == 1 and "" or "s") or ""
  return ("turn %d  %s  %s%s"):format(number_of(t), when, tostring(t.prompt or ""), files)
end

--- `:ElelemRewind [N]`: rewinds to before the turn numbered N (as the picker and the
--- terminal's /rewind number them: 1, 2, 3), or picks one.
---@param turn integer|string|nil
function M.pick(turn)
  local s = session.current()
  if turn ~= nil and turn ~= "" then
    local wanted = tonumber(turn)
    if not wanted or wanted ~= math.floor(wanted) or wanted < 1 or wanted > 1e9 then
      return notify(("not a turn number: %s (:ElelemRewind lists the turns)"):format(tostring(turn):sub(1, 40)),
        vim.log.levels.ERROR)
    end
    return turns(s, function(list)
      for _, t in ipairs(list) do
        if number_of(t) == wanted then
          return M.rewind(s, t.turnId, { numbers = M.numbers(list) })
        end
      end
      notify(("no turn %d in this conversation (turns 1 to %d): :ElelemRewind lists them"):format(
        wanted, number_of(list[#list])), vim.log.levels.ERROR)
    end)
  end
  turns(s, function(list)
    -- oldest first, so the picker's own number (vim.ui.select's inputlist numbers its
    -- lines 1, 2, 3) is the turn's: the number typed is the number seen (issue 40)
    -- a turn the list lacks (no checkpoint) keeps its line, so the numbers stay the turns'
    local items, last = {}, 0
    for _, t in ipairs(list) do
      local n = number_of(t)
      if type(n) == "number" and n > last and n - last <= 1000 then
        for gap = last + 1, n - 1 do
          table.insert(items, { number = gap, missing = true })
        end
        last = n
      end
      table.insert(items, t)
    end
    local numbers = M.numbers(list)
    vim.ui.select(items, {
      prompt = "Rewind to before turn",
      kind = "elelem.rewind",
      format_item = function(t)
        return t.missing and ("turn %d  (no checkpoint)"):format(t.number) or M.format(t)
      end,
    }, function(choice)
      if choice and choice.missing then
        notify(("turn %d has no checkpoint to rewind to"):format(choice.number), vim.log.levels.WARN)
      elseif choice then
        M.rewind(s, choice.turnId, { numbers = numbers })
      end
    end)
  end)
end

return M
