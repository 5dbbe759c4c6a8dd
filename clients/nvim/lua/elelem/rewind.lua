--- Checkpoints (issue 17, protocol.md `session/rewind`, docs/checkpoints.md): `:ElelemUndo`
--- rewinds the last turn, `:ElelemRewind` picks one from `session/checkpoints`. Each asks
--- first: a dry run lists what is restored, brought back and deleted, the files changed
--- outside the agent, and any unsaved buffer of those files; then the rewind is sent with
--- `force`, the affected buffers follow the restored files with the user's unsaved edits
--- kept (elelem.restore), and the chat is redrawn with the kept turns' tool calls and plan.
local buffers = require("elelem.buffers")
local restore = require("elelem.restore")
local daemon = require("elelem.daemon")
local errors = require("elelem.errors")
local session = require("elelem.session")

local M = {}

---@param message string
---@param level integer?
local function notify(message, level)
  vim.notify("elelem: " .. message, level or vim.log.levels.INFO)
end

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

--- What a plan (a dry run's result, or `tool.plan` of a `/undo` question) will do, as lines.
---@param plan table
---@param cwd string?
---@return string[]
function M.describe(plan, cwd)
  local lines = {}
  local files = type(plan.files) == "table" and plan.files or nil
  local function list(label, items)
    items = strings(items)
    if #items > 0 then
      table.insert(lines, ("%s: %s"):format(label, table.concat(items, ", ")))
    end
  end
  if files then
    list("restores", files.restored)
    list("brings back", files.created)
    list("deletes", files.deleted)
    list("folders made again", files.dirsCreated)
    list("folders removed", files.dirsRemoved)
    list("WARNING: changed outside the agent since (your edits there are lost)", files.outside)
    list("WARNING: no checkpoint holds their current content", files.unsaved)
    list("left as they are", files.uncovered)
    if #touched(plan) == 0 then
      table.insert(lines, "no file changes")
    end
  end
  list("unsaved changes kept (merged into the restored text)", unsaved_buffers(plan, cwd))
  local conversation = type(plan.conversation) == "table" and plan.conversation or nil
  if conversation then
    list("drops turns", conversation.dropped)
  end
  return lines
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

--- The message for a rewind error, by `data.kind`.
---@param err elelem.Error
---@param turn integer
---@return string
function M.explain(err, turn)
  local kind = errors.kind(err)
  local data = type(err.data) == "table" and err.data or {}
  if kind == "session_busy" then
    return "cannot rewind while a turn runs (in this session, or another in the same folder): try again when it ends"
  elseif kind == "unknown_turn" then
    return ("turn %s is no longer in the conversation (the list was stale): :ElelemRewind lists the turns again"):format(
      tostring(data.turnId or turn))
  elseif kind == "no_checkpoint" then
    local reasons = {
      disabled = "checkpoints are off (ELELEM_CHECKPOINTS=0)",
      pruned = "its checkpoint was pruned (retention)",
      failed = "its checkpoint failed when the turn ran",
      missing = "its checkpoint is gone or broken",
      tampered = "its checkpoint names another turn",
    }
    local reason = reasons[data.reason] or tostring(data.reason or "no checkpoint")
    return ("the files of turn %s cannot be rewound: %s"):format(tostring(data.turnId or turn), reason)
  elseif kind == "outside_changes" then
    local files = type(data.files) == "table" and strings(data.files.outside) or {}
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

--- Rewinds session `s` to before `turn` (files and conversation unless `opts` says).
---@param s elelem.Session
---@param turn integer
---@param opts {files: boolean?}?
function M.rewind(s, turn, opts)
  opts = opts or {}
  local files = opts.files ~= false
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
        return confirm({ M.explain(err, turn) }, "Rewind the conversation only?", function(yes)
          if yes then
            M.rewind(s, turn, { files = false })
          end
        end)
      end
      return notify(M.explain(err, turn), vim.log.levels.ERROR)
    end
    local lines = { ("Rewind to before turn %d%s:"):format(turn, files and "" or " (conversation only)") }
    vim.list_extend(lines, M.describe(plan, cwd))
    confirm(lines, "Go on?", function(yes)
      if not yes or epoch ~= s.epoch then
        return
      end
      local real = vim.tbl_extend("force", params, { force = true })
      local kept = M.snapshot(plan, cwd)
      daemon.request("session/rewind", real, function(rerr, result)
        if epoch ~= s.epoch then
          return
        elseif rerr then
          return notify(M.explain(rerr, turn), vim.log.levels.ERROR)
        end
        M.redraw(s, result)
        local summary = M.describe(result, cwd)
        s.chat:notice(("(rewound to before turn %d%s)"):format(turn, #summary > 0 and (": " .. table.concat(summary, "; ")) or ""))
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
    if not err and type(result) == "table" then
      M.redraw(s, result)
    end
    s.chat:output(output)
    M.reload(plan, cwd, kept, function(notes)
      for _, note in ipairs(notes) do
        s.chat:notice("(" .. note .. ")")
      end
    end, s.id)
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
    local list = type(result) == "table" and result.turns or {}
    if #list == 0 then
      return notify("no turn to rewind")
    end
    cb(list)
  end)
end

--- `:ElelemUndo`: rewinds the last turn.
function M.undo()
  local s = session.current()
  turns(s, function(list)
    M.rewind(s, list[#list].turnId)
  end)
end

---@param t table
---@return string
function M.format(t)
  local when = tostring(t.at or ""):gsub("T", " "):gsub("%.%d+", ""):gsub("Z$", ""):gsub("%+00:00$", "")
  local files = t.filesTotal and t.filesTotal > 0 and (" · %d file%s"):format(t.filesTotal, t.filesTotal == 1 and "" or "s") or ""
  return ("%d  %s  %s%s"):format(t.turnId, when, tostring(t.prompt or ""), files)
end

--- `:ElelemRewind [N]`: rewinds to before turn N, or picks one.
---@param turn integer?
function M.pick(turn)
  local s = session.current()
  if turn then
    if not s.id then
      return notify("this tab has no session yet: nothing to rewind")
    end
    return M.rewind(s, turn)
  end
  turns(s, function(list)
    local items = vim.fn.reverse(vim.list_slice(list)) -- newest first
    vim.ui.select(items, { prompt = "Rewind to before turn", format_item = M.format, kind = "elelem.rewind" },
      function(choice)
        if choice then
          M.rewind(s, choice.turnId)
        end
      end)
  end)
end

return M
