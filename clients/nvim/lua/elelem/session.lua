--- One daemon session per tab: its chat, its prompt area, and the requests that drive them.
--- A session is created on the daemon lazily (the first prompt), and again after the daemon
--- has died or `:ElelemNew`.
local ask = require("elelem.ask")
local chat = require("elelem.chat")
local config = require("elelem.config")
local context = require("elelem.context")
local daemon = require("elelem.daemon")
local errors = require("elelem.errors")
local input = require("elelem.input")
local layout = require("elelem.layout")
local review = require("elelem.review")
local trust = require("elelem.trust")

local M = {}

local api = vim.api

---@type table<integer, elelem.Session> by tabpage handle
M.sessions = {}

---@type table<string, elelem.Session> by daemon session id
local by_id = {}

---@class elelem.Session
---@field tab integer
---@field id string?
---@field info table? the `session/new` (or `session/load`) result
---@field busy boolean a turn or command is running
---@field cancelled boolean
---@field epoch integer bumped when the session is replaced, so late answers are dropped
---@field creating fun(err: elelem.Error?)[]?
---@field chat elelem.Chat
---@field prompt integer? the prompt buffer
---@field turns {turnId: integer, text: string}[] this client's turns, by their `turnId`
---@field held string[]? steers that found no turn running, sent as a turn once it answers
---@field unsent boolean? a steer not sent was put back in the prompt area this turn
local Session = {}
Session.__index = Session

--- The current tab's session (made on first use).
---@return elelem.Session
function M.current()
  local tab = api.nvim_get_current_tabpage()
  local session = M.sessions[tab]
  if not session then
    session = setmetatable({ tab = tab, busy = false, cancelled = false, epoch = 0, turns = {} }, Session)
    session.chat = chat.new(tostring(tab))
    M.sessions[tab] = session
  end
  return session
end

--- The session a daemon session id belongs to.
---@param id string
---@return elelem.Session?
function M.find(id)
  return by_id[id]
end

---@return integer
function Session:input()
  if self.prompt and api.nvim_buf_is_valid(self.prompt) then
    return self.prompt
  end
  self.prompt = input.create(tostring(self.tab), {
    submit = function(text)
      return (self:send(text))
    end,
    cancel = function()
      self:cancel()
    end,
    busy = function()
      return self.busy
    end,
  })
  return self.prompt
end

--- Keys of the chat buffer: `<C-c>` cancels, `<CR>` on a tool line shows its result, `A`
--- picks the answer of a waiting question, `i`/`a`/`o` go to the prompt. No `q`: closing by
--- one key sent the next keys into the file (`:ElelemClose` closes the chat).
---@param buf integer
function Session:keymaps(buf)
  if vim.b[buf].elelem_keys then
    return
  end
  vim.b[buf].elelem_keys = true
  local function map(lhs, fn, desc)
    vim.keymap.set("n", lhs, fn, { buffer = buf, desc = "elelem: " .. desc, nowait = true })
  end
  map("<C-c>", function()
    self:cancel()
  end, "cancel the turn")
  local chatask = require("elelem.chatask")
  local k = config.options.review.keys
  for action, lhs in pairs({ accept = k.accept, reject = k.reject, accept_all = k.accept_all, reject_all = k.reject_all }) do
    if lhs ~= "" then
      map(lhs, function()
        if not require("elelem.chatreview").key(buf, api.nvim_win_get_cursor(0)[1] - 1, action) then
          vim.cmd.normal({ lhs, bang = true }) -- what it does elsewhere
        end
      end, "review: " .. action:gsub("_", " ") .. " (on a hunk shown in the chat)")
    end
  end
  map("A", function()
    if not chatask.pick_in(buf) then
      vim.notify("elelem: no question is waiting in this chat", vim.log.levels.INFO)
    end
  end, "pick the answer of the waiting question")
  map("<CR>", function()
    if chatask.enter(buf, api.nvim_win_get_cursor(0)[1] - 1) then
      return
    end
    local call = self.chat:call_at(api.nvim_win_get_cursor(0)[1] - 1)
    if call then
      return require("elelem.result").open(call)
    end
    vim.cmd.normal({ vim.v.count1 .. "+", bang = true }) -- what <CR> does elsewhere
  end, "show the result of the tool call on this line")
  for _, key in ipairs({ "i", "a", "o" }) do
    map(key, function()
      self:show("input")
      vim.cmd.startinsert({ bang = true })
    end, "write in the prompt area")
  end
end

--- Opens the chat windows in this tab, focusing `focus`.
---@param focus "input"|"chat"|nil
function Session:show(focus)
  local buf = self.chat:buffer()
  self:keymaps(buf)
  layout.open(buf, self:input(), focus)
  self:refresh()
end

--- Updates the winbar.
function Session:refresh()
  local info = self.info
  local parts = {}
  if info then
    table.insert(parts, ("%s · %s"):format(info.provider or "?", self:model() or "?"))
    local mode = self:mode()
    if mode then
      table.insert(parts, "mode: " .. mode)
    end
  end
  if self.creating then
    table.insert(parts, "starting…")
  elseif self.busy then
    table.insert(parts, "working… (<C-c> cancels)")
  elseif not self.id then
    table.insert(parts, "no session yet")
  end
  -- the meter last: a narrow chat's winbar is cut at its start, so this stays in view
  local meter = require("elelem.meter").text(self.meter)
  if meter ~= "" then
    table.insert(parts, meter)
  end
  layout.status(self.chat:buffer(), table.concat(parts, " · "))
  pcall(vim.cmd.redrawstatus, { bang = true }) -- statusline() says "…" while a turn runs: not after
end

---@param result table a `session/new` or `session/load` result
function Session:adopt(result)
  self.id, self.info = result.sessionId, result
  by_id[self.id] = self
  self.mcp = nil
  self:mcp_status(result.mcp)
end

--- The model that answers: the one the provider's server says (`servedModel`, once
--- known), else the one asked for (issue 40: `gpt-4o` was shown while SmolLM2 answered).
---@return string?
function Session:model()
  local info = self.info or {}
  local served = type(info.servedModel) == "string" and info.servedModel ~= "" and info.servedModel or nil
  return served or (type(info.model) == "string" and info.model or nil)
end

--- The current mode's id (`session/new`'s `mode.current`, then `event/mode`), if any.
---@return string?
function Session:mode()
  local mode = self.info and self.info.mode
  return type(mode) == "table" and type(mode.current) == "string" and mode.current or nil
end

--- A new mode (`event/mode`, `session/setMode`'s answer): the winbar and statusline follow.
---@param mode table?
function Session:set_mode(mode)
  if type(mode) ~= "table" or not self.info then
    return
  end
  local before = self:mode()
  self.info.mode = mode
  if before ~= self:mode() then
    self.chat:notice(("(mode: %s)"):format(tostring(self:mode())))
  end
  self:refresh()
  pcall(vim.cmd.redrawstatus)
end

--- A new MCP status (`result.mcp`, `event/mcp`): elelem.mcp announces what changed.
---@param status table?
function Session:mcp_status(status)
  require("elelem.mcp").update(self, status)
end

--- Calls `cb(err)` once the session exists on the daemon, creating it if needed, and once
--- its trust question (elelem.trust) is answered. `quiet` (prestart) leaves the question for
--- the first caller that is not quiet.
---@param cb fun(err: elelem.Error?)
---@param quiet boolean?
function Session:ensure(cb, quiet)
  if self.creating then
    self.quiet = self.quiet and quiet
    return table.insert(self.creating, cb)
  end
  if self.id and (quiet or not self.trust_due) then
    return cb(nil)
  end
  local waiting, epoch = { cb }, self.epoch
  self.creating, self.quiet = waiting, quiet
  local function finish(err)
    if epoch ~= self.epoch then
      err = err or { code = errors.codes.request_cancelled, message = "the session was replaced" }
    end
    if self.creating == waiting then
      self.creating = nil
    end
    self:refresh()
    for _, fn in ipairs(waiting) do
      fn(err)
    end
  end
  local function settle()
    if not self.trust_due or self.quiet then
      return finish(nil)
    end
    self.trust_due = false
    trust.ask(self, function()
      finish(nil)
    end)
  end
  if self.id then
    return settle()
  end
  local cwd = config.cwd()
  local params = { cwd = cwd, provider = config.options.provider, model = config.options.model }
  params.trusted = trust.decide(cwd)
  params.mcpServers = config.options.mcpServers
  self:refresh()
  daemon.request("session/new", params, function(err, result)
    if err or epoch ~= self.epoch then
      return finish(err)
    end
    self:adopt(result)
    self.trust_due = trust.due(result)
    settle()
  end)
end

---@param err elelem.Error
---@param text string? the prompt or command line that failed
function Session:fail(err, text)
  self.busy = false
  vim.schedule(function()
    self:release()
  end)
  self.chat:notice("error: " .. errors.message(err), "ElelemError")
  local kind = errors.kind(err)
  if text and kind == "session_busy" and input.restore(self:input(), text) then
    self.chat:notice("(the prompt is back in the prompt area: send it when the session is free)")
  elseif text and kind == "invalid_attachment" and input.restore(self:input(), text) then
    self.chat:notice("(nothing was sent: your prompt is back in the prompt area)")
  end
  self:refresh()
end

--- Sends a line: a slash command when it starts with `/`, a turn otherwise.
--- Returns false and a reason when the session is busy.
---@param text string
---@return boolean ok
---@return string? reason
function Session:send(text)
  local shell = text:match("^/shell%s*(.*)$")
  if shell and (text == "/shell" or text:match("^/shell%s")) then
    return self:shell(shell)
  end
  local edit = text:match("^/context%s+edit%s*(.-)%s*$")
  if edit then -- the client's: the message opens in a buffer, `:w` sends session/editContext
    return require("elelem.edit").open(self, edit)
  end
  if self.busy and text:sub(1, 1) ~= "/" then
    return self:steer(text)
  end
  if self.busy then
    -- kept, not lost: typed in the prompt area it stays there; from `:Elelem` it goes there
    input.restore(self:input(), text)
    local reason = "elelem: a turn is running; your command waits in the prompt area "
      .. "(send it when the turn ends, or :ElelemCancel)"
    vim.notify(reason, vim.log.levels.WARN)
    return false, reason
  end
  local sent, attachments = text, nil
  if text:sub(1, 1) ~= "/" then
    local found, problem
    sent, found, problem = context.expand(text)
    if problem then
      input.restore(self:input(), text)
      vim.notify("elelem: " .. problem .. " (your prompt waits in the prompt area)", vim.log.levels.WARN)
      return false, problem
    end
    attachments = vim.list_extend(self.pending or {}, found)
    self.pending = nil
    self:show_pending()
  end
  self.busy, self.cancelled = true, false
  self.held = self.held or {}
  if text:sub(1, 1) == "/" then
    self.chat:command(text)
  else
    self.chat:user(text)
    self.chat:follow() -- sending brings the chat back to its end, wherever the user had read
    if #attachments > 0 then
      self.chat:notice("attached: " .. table.concat(vim.tbl_map(context.label, attachments), " · "))
    end
  end
  self:refresh()
  local epoch = self.epoch
  self:ensure(function(err)
    if epoch ~= self.epoch then
      return
    elseif err then
      return self:fail(err)
    elseif self.cancelled then
      self.busy = false
      self.chat:finish({ stopReason = "cancelled" })
      self:refresh()
      return self:release()
    end
    if text:sub(1, 1) == "/" then
      self:command(text, epoch)
    else
      self:turn(sent, epoch, attachments, text)
    end
  end)
  return true
end

--- A prompt sent while a turn runs: a steer (elelem.steer).
---@param text string
---@return boolean ok
---@return string? reason
function Session:steer(text)
  return require("elelem.steer").send(self, text)
end

--- After a turn or command has answered: the steers that found no turn running (elelem.steer).
function Session:release()
  require("elelem.steer").release(self)
end

--- Adds attachments for the next prompt, shown above the prompt area.
---@param attachments table[]
function Session:attach(attachments)
  self.pending = self.pending or {}
  vim.list_extend(self.pending, attachments)
  self:show_pending()
end

--- Shows the pending attachments in the prompt area's winbar (always in view).
function Session:show_pending()
  local buf = self:input()
  local labels = vim.tbl_map(context.label, self.pending or {})
  vim.b[buf].elelem_pending = #labels > 0 and table.concat(labels, " · ") or nil
  layout.prompt_status(buf)
end

--- The pending attachments' labels (what the prompt area shows).
---@return string[]
function Session:pending_labels()
  return vim.tbl_map(context.label, self.pending or {})
end

---@param text string what the model reads (the `#` words taken out)
---@param epoch integer
---@param attachments table[]?
---@param typed string? what the user typed, put back when the turn is refused
function Session:turn(text, epoch, attachments, typed)
  local id = self.id
  local params = { sessionId = id, text = text }
  if attachments and #attachments > 0 then
    params.attachments = attachments
  end
  daemon.request("session/turn", params, function(err, result)
    ask.dismiss(id) -- a question cannot outlive its turn, nor a review
    review.dismiss(id)
    if epoch ~= self.epoch then
      return
    elseif err then
      if attachments and #attachments > 0 then -- the turn did not run: they wait for the next
        self.pending = vim.list_extend(attachments, self.pending or {})
        self:show_pending()
      end
      return self:fail(err, typed or text)
    end
    self.busy = false
    if type(result.turnId) == "number" then -- names the turn for good: :ElelemRewind takes it
      table.insert(self.turns, { turnId = result.turnId, text = text })
      require("elelem.restore").turn_ended(id, result.turnId)
    end
    self.chat:finish(result)
    require("elelem.mcp").flush(self) -- server lines that waited for the reply to end
    self:refresh()
    self:release()
  end)
end

---@param line string
---@param epoch integer
function Session:command(line, epoch)
  self.rewound = nil
  daemon.request("session/command", { sessionId = self.id, line = line }, function(err, result)
    if epoch ~= self.epoch then
      return
    elseif err then
      return self:fail(err, line)
    end
    self.busy = false
    local rewound, kept = self.rewound, self.kept -- /undo or /rewind N went on: its plan, from the question
    self.rewound, self.kept = nil, nil
    if rewound then
      require("elelem.rewind").after(self, rewound, tostring(result.output or ""), kept)
      return self:refresh()
    end
    self.chat:output(tostring(result.output or ""))
    if result.exit then -- /exit: this session is over
      self:reset()
      return layout.close({ self.chat:buffer(), self:input() })
    end
    self:refresh()
    self:update() -- /provider and /model change what the winbar shows
    self:release()
  end)
end

--- `/shell [command]`: the client's (elelem.shell).
---@param command string
---@return boolean
function Session:shell(command)
  return require("elelem.shell").run(self, command)
end

--- Re-reads provider and model from `session/list`.
function Session:update()
  local id, epoch = self.id, self.epoch
  daemon.request("session/list", vim.empty_dict(), function(err, result)
    if err or epoch ~= self.epoch or not self.info then
      return
    end
    for _, entry in ipairs(result.sessions or {}) do
      if entry.sessionId == id and entry.open ~= false then
        -- a /model or /provider switch asks anew; the open session's stored entry (listed
        -- after it, `open: true`) carries no servedModel, so an unchanged one is kept
        local switched = entry.provider ~= self.info.provider or entry.model ~= self.info.model
        self.info.provider, self.info.model = entry.provider, entry.model
        if switched or entry.servedModel ~= nil then
          self.info.servedModel = entry.servedModel
        end
      end
    end
    self:refresh()
  end)
end

--- Cancels the running turn; false when nothing runs.
---@return boolean
function Session:cancel()
  if not self.busy then
    return false
  end
  self.cancelled = true
  if self.id then
    daemon.notify("session/cancel", { sessionId = self.id })
  end
  return true
end

--- Forgets the daemon session (closing it there) and clears the chat.
function Session:reset()
  self.epoch = self.epoch + 1
  if self.id then
    by_id[self.id] = nil
    if daemon.state() == "ready" then
      daemon.request("session/close", { sessionId = self.id })
    end
  end
  self.id, self.info, self.busy, self.creating, self.trust_due = nil, nil, false, nil, false
  self.turns, self.pending, self.held = {}, nil, {}
  if self.prompt and api.nvim_buf_is_valid(self.prompt) then
    self:show_pending()
  end
  self.chat:clear()
  self:refresh()
end

--- The command names this session knows, for completion.
---@return {name: string, description: string?}[]
function Session:commands()
  local commands = vim.tbl_filter(function(c) -- the daemon's /shell is the terminal's: ours wins
    return c.name ~= "shell"
  end, vim.deepcopy(self.info and self.info.commands or {}))
  table.insert(commands, { name = "shell", description = "Start interactive shell (a terminal here)" })
  return commands
end

--- Forgets every daemon session id (the daemon is gone).
function M.forget()
  by_id = {}
end

--- Drops the sessions of closed tabs.
function M.prune()
  for tab, session in pairs(M.sessions) do
    if not api.nvim_tabpage_is_valid(tab) then
      session:reset()
      M.sessions[tab] = nil
      for _, buf in ipairs({ session.chat.buf, session.prompt }) do
        if buf and api.nvim_buf_is_valid(buf) then
          api.nvim_buf_delete(buf, { force = true })
        end
      end
    end
  end
end

return M
