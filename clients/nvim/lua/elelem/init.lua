--- elelem.nvim: the elelem agent in Neovim, as a thin client of `elelem daemon`.
--- `setup(opts)` is optional; the functions below back the user commands of plugin/elelem.lua.
local ask = require("elelem.ask")
local config = require("elelem.config")
local context = require("elelem.context")
local daemon = require("elelem.daemon")
local events = require("elelem.events")
local files = require("elelem.files")
local input = require("elelem.input")
local log = require("elelem.log")
local requests = require("elelem.requests")
local session = require("elelem.session")

local M = {}

local HIGHLIGHTS = {
  ElelemThinking = { link = "Comment" },
  ElelemDim = { link = "Comment" },
  ElelemTool = { link = "Function" },
  ElelemToolOk = { link = "DiagnosticOk" },
  ElelemToolError = { link = "DiagnosticError" },
  ElelemError = { link = "DiagnosticError" },
  ElelemTitle = { link = "Title" },
  ElelemReviewLines = { link = "DiffChange" },
  ElelemReviewPending = { link = "WarningMsg" },
}

local function highlights()
  for name, spec in pairs(HIGHLIGHTS) do
    vim.api.nvim_set_hl(0, name, vim.tbl_extend("force", spec, { default = true }))
  end
end

local group = vim.api.nvim_create_augroup("elelem", { clear = true })
vim.api.nvim_create_autocmd("VimLeavePre", {
  group = group,
  callback = function()
    daemon.shutdown()
  end,
})
vim.api.nvim_create_autocmd("TabClosed", {
  group = group,
  callback = function()
    vim.schedule(session.prune) -- a closing tab of several windows is still valid here
  end,
})
vim.api.nvim_create_autocmd("ColorScheme", { group = group, callback = highlights })
vim.api.nvim_create_autocmd({ "BufEnter", "WinEnter" }, {
  group = group,
  callback = function()
    context.track()
    context.debounce()
  end,
})
vim.api.nvim_create_autocmd({ "CursorHold", "CursorHoldI", "DiagnosticChanged", "WinScrolled", "ModeChanged" }, {
  group = group,
  callback = function()
    context.debounce()
  end,
})
context.track()
highlights()

daemon.handlers.notification = events.on_notification
daemon.handlers.exit = events.on_daemon_exit
daemon.handlers.request["input/ask"] = ask.answer
daemon.handlers.request["files/read"] = files.read
daemon.handlers.request["files/propose"] = files.propose
daemon.handlers.request["fs/read_text_file"] = files.read_text_file
daemon.handlers.request["fs/write_text_file"] = files.write_text_file
daemon.handlers.cancel = requests.cancel
files.on_outcome = function(params, answer)
  local s = session.find(params.sessionId)
  if not s or not params.review then
    return
  end
  s.chat:flush()
  local shown = answer.outcome
  if answer.outcome == "partial" then
    shown = ("partial: hunks %s of %d accepted"):format(table.concat(answer.acceptedHunks, ", "), #params.hunks)
  end
  s.chat:notice(("review of %s → %s"):format(require("elelem.review").shown_path(params.path), shown))
end
local review = require("elelem.review")
review.on_open = function(r)
  local s = session.find(r.params.sessionId)
  local shown = review.shown_path(r.params.path)
  local n = #r.params.hunks
  local where = ("review of %s (%d hunk%s) waiting in the split below: :ElelemReview to decide"):format(
    shown, n, n == 1 and "" or "s")
  local chatask = require("elelem.chatask")
  if s and chatask.enabled() then
    require("elelem.chatreview").review(s, r, where) -- the hunks and their keys in the chat too
  elseif s then
    s.chat:notice("▶ " .. where, "ElelemReviewPending")
  end
  -- one screen line: a longer message would wait for <Enter> and take the keys being typed
  local short = ("elelem: review of %s waiting: :ElelemReview"):format(shown)
  local room = math.max(20, vim.v.echospace - 1)
  if vim.fn.strdisplaywidth(short) > room then
    short = vim.fn.strcharpart(short, 0, room - 1) .. "…"
  end
  vim.notify(short, vim.log.levels.WARN)
  pcall(vim.cmd.redrawstatus, { bang = true })
end
review.on_mark = function(r)
  require("elelem.chatreview").mark(r)
end
review.on_change = function()
  pcall(vim.cmd.redrawstatus, { bang = true })
end
ask.on_question = function(params)
  local s = session.find(params.sessionId)
  if not s then
    return
  end
  s.chat:flush() -- streamed text still queued for the next tick
  local diff = type(params.tool) == "table" and params.tool.diff
  if type(diff) == "string" and diff ~= "" then
    s.chat:diff(diff)
  end
end
ask.on_answer = function(params, answer, dismissed)
  local s = session.find(params.sessionId)
  local tool = type(params.tool) == "table" and params.tool or {}
  if s and params.kind == "confirm" and tool.name == "rewind" and answer == "yes" and type(tool.plan) == "table" then
    s.rewound = tool.plan -- the command goes on: reload and redraw when it answers
    s.kept = require("elelem.rewind").snapshot(tool.plan, s.info and s.info.cwd) -- before the restore
  end
  if s then
    local question = params.prompt or (params.tool and params.tool.name) or "?"
    local gone = params.kind == "authorize" and "(withdrawn: no longer needed)" or "(dismissed: the turn ended)"
    local shown = dismissed and gone or answer == nil and "(no answer)" or answer
    s.chat:notice(("? %s → %s"):format(question, shown))
  end
end
input.commands = function()
  return session.current():commands()
end
input.request = function(text, cb)
  local s = session.current()
  s:ensure(function(failed)
    if failed then
      return cb({})
    end
    daemon.request("session/complete", { sessionId = s.id, text = text }, function(err, result)
      cb(not err and result and result.items or {})
    end)
  end)
end

--- `prestart`: start the daemon and open this tab's session in the background, so the
--- chat is ready when opened. A trust question the session calls for (elelem.trust) waits
--- for the first use.
local function prestart()
  if not config.options.prestart then
    return
  end
  session.current():ensure(function() end, true)
end

--- Configures the plugin; see `:help elelem-setup`. Raises on a bad option.
---@param opts elelem.Config?
function M.setup(opts)
  config.setup(opts)
  log.level = config.options.log_level
  if not config.options.prestart then
    return
  end
  if vim.v.vim_did_enter == 1 then
    vim.defer_fn(prestart, 0)
  else
    vim.api.nvim_create_autocmd("VimEnter", {
      group = group,
      once = true,
      callback = function()
        vim.defer_fn(prestart, 0) -- after start-up has drawn the screen
      end,
    })
  end
end

--- Opens (or focuses) this tab's chat and sends `prompt` if given.
---@param prompt string?
function M.open(prompt)
  context.track() -- the buffer `#buffer` means, before the prompt area takes the focus
  local s = session.current()
  s:show("input")
  if prompt and vim.trim(prompt) ~= "" then
    return s:send(vim.trim(prompt))
  end
  if #vim.api.nvim_list_uis() > 0 then
    vim.cmd.startinsert()
  end
  s:ensure(function() end) -- start early: command completion needs the session's commands
  return true
end

--- Sends a prompt or a `/command` line in this tab's session.
---@param text string
---@return boolean ok
function M.send(text)
  return M.open(text)
end

--- `:ElelemModel [name]`: the model picker (elelem.models).
---@param name string?
function M.model(name)
  require("elelem.models").pick(name)
end

--- `:ElelemClose`: closes this tab's chat windows (the session goes on; `:Elelem` shows it).
function M.close()
  local s = session.current()
  require("elelem.layout").close({ s.chat:buffer(), s:input() })
end

--- Cancels this tab's running turn.
---@return boolean cancelled
function M.cancel()
  local ok = session.current():cancel()
  if not ok then
    vim.notify("elelem: no turn is running", vim.log.levels.INFO)
  end
  return ok
end

--- Starts a fresh session in this tab (the old one is closed on the daemon).
function M.new()
  local s = session.current()
  s:reset()
  s:show("input")
end

--- Shows `/context`: exactly what the model sees next turn; `args` as `/context`'s
--- (`edit N` opens message N in a buffer, `delete 3-4`).
---@param args string?
function M.context(args)
  args = vim.trim(args or "")
  return M.open(args == "" and "/context" or "/context " .. args)
end

--- `path` relative to `dir` when it is inside it (the agent's tools resolve paths there).
---@param path string
---@param dir string
---@return string
local function relative(path, dir)
  path = vim.fs.normalize(vim.fn.fnamemodify(path, ":p"))
  dir = vim.fs.normalize(vim.fn.fnamemodify(dir, ":p"))
  local prefix = dir:sub(-1) == "/" and dir or dir .. "/"
  if vim.startswith(path, prefix) then
    return path:sub(#prefix + 1)
  end
  return vim.fn.fnamemodify(path, ":~")
end

--- Sends lines `line1`..`line2` of buffer `buf` as context, with `prompt` (or puts them in
--- the prompt area to be asked about when there is no prompt).
---@param line1 integer
---@param line2 integer
---@param prompt string?
---@param buf integer?
function M.selection(line1, line2, prompt, buf)
  buf = buf or vim.api.nvim_get_current_buf()
  local name = vim.api.nvim_buf_get_name(buf)
  local path = name == "" and "[No Name]" or relative(name, config.cwd())
  local lines = vim.api.nvim_buf_get_lines(buf, line1 - 1, line2, false)
  local longest = 2
  for _, line in ipairs(lines) do
    for run in line:gmatch("`+") do
      longest = math.max(longest, #run)
    end
  end
  local fence = ("`"):rep(longest + 1)
  local block = ("%s lines %d-%d:\n\n%s%s\n%s\n%s"):format(
    path, line1, line2, fence, vim.bo[buf].filetype, table.concat(lines, "\n"), fence)
  if prompt and vim.trim(prompt) ~= "" then
    return M.open(vim.trim(prompt) .. "\n\n" .. block)
  end
  local s = session.current()
  s:show("input")
  input.fill(s:input(), "\n\n" .. block)
  vim.api.nvim_win_set_cursor(0, { 1, 0 })
  return true
end

--- Resumes the most recent stored session of this directory (protocol draft, issue 8).
function M.resume()
  require("elelem.history").resume()
end

--- Picks a stored session to load (protocol draft, issue 8).
function M.pick()
  require("elelem.history").pick()
end

--- `:ElelemAdd`: the current file (or lines `line1`..`line2`) waits as an attachment of the
--- next prompt; `clear` drops the pending ones.
---@param line1 integer?
---@param line2 integer?
---@param clear boolean?
function M.add(line1, line2, clear)
  return context.add(line1, line2, clear)
end

--- Accepts the whole change of the open review (the current buffer's, else the newest);
--- `"turn"`: and every later change of this turn, unreviewed.
---@param arg string?
---@return boolean
function M.accept(arg)
  local r = require("elelem.review").find()
  if not r then
    vim.notify("elelem: no review is open", vim.log.levels.INFO)
    return false
  end
  r:all(true, { turn = vim.trim(arg or "") == "turn" })
  return true
end

--- `:ElelemReview`: moves into the newest open review (shown again if hidden).
---@return boolean
function M.review()
  if not require("elelem.review").enter() then
    vim.notify("elelem: no review is open", vim.log.levels.INFO)
    return false
  end
  return true
end

--- `:ElelemAnswer [answer]`: answers the question waiting in this tab's chat.
---@param answer string?
---@return boolean
function M.answer(answer)
  return require("elelem.chatask").answer(answer)
end

--- The answers of the question waiting in this tab's chat (completion of :ElelemAnswer).
---@return string[]
function M.answer_options()
  return require("elelem.chatask").options()
end

--- Rejects the whole change of the open review; `reason` is shown to the model.
---@param reason string?
---@return boolean
function M.reject(reason)
  local r = require("elelem.review").find()
  if not r then
    vim.notify("elelem: no review is open", vim.log.levels.INFO)
    return false
  end
  reason = vim.trim(reason or "")
  r:all(false, { reason = reason ~= "" and reason or nil })
  return true
end

--- Undoes this tab's last turn (files and conversation), after a confirmation.
function M.undo()
  require("elelem.rewind").undo()
end

--- Rewinds to before the turn numbered `turn` (as the user counts them), or picks one.
---@param turn integer|string|nil
function M.rewind(turn)
  require("elelem.rewind").pick(turn)
end

--- Shows this tab's MCP servers and their state.
---@return string[]
function M.mcp()
  return require("elelem.mcp").show()
end

--- Stops the daemon; the next command starts it again.
function M.restart()
  daemon.stop()
  vim.notify("elelem: daemon stopped; the next command starts it again", vim.log.levels.INFO)
end

--- Completion for `:Elelem`: `/name` of this tab's session commands.
---@param arglead string
---@param cmdline string
---@return string[]
function M.complete(arglead, cmdline)
  local args = cmdline:gsub("^%s*%S+%s*", "")
  if args:sub(1, 1) ~= "/" or args:find("%s") then
    return {}
  end
  local s = session.current()
  if not s.id then
    s:ensure(function() end)
  end
  return vim.tbl_map(function(item)
    return item.word
  end, input.matches(s:commands(), arglead))
end

--- `:ElelemMode [name]`: switches this tab's session to mode `name`, or picks one.
---@param name string?
function M.mode(name)
  require("elelem.modes").pick(name)
end

--- The mode ids of this tab's session, for completion.
---@return string[]
function M.mode_names()
  return require("elelem.modes").names()
end

--- A statusline component: "" without a session, else "elelem:MODE" and "…" while a turn
--- runs (e.g. `vim.o.statusline = "%f %=%{v:lua.require'elelem'.statusline()}"`).
---@return string
function M.statusline()
  return require("elelem.modes").statusline()
end

--- A short status for statuslines: "", "elelem: working…", "elelem: ready".
---@return string
function M.status()
  local s = session.sessions[vim.api.nvim_get_current_tabpage()]
  if not s or not s.id then
    return ""
  end
  return s.busy and "elelem: working…" or "elelem: ready"
end

return M
