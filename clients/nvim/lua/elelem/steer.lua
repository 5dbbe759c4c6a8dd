--- Steering (protocol.md "Steering"): a prompt sent while a turn runs is a `session/steer`,
--- a user message the running turn sends with its next provider request. No turn running
--- after all (`not_running`: it ended, or a command runs) sends it as a turn, once what
--- runs has answered (`release`). Any other refusal says why and keeps the text. One the
--- turn never took (the daemon's `event/say` "steer not sent (the turn ended first): TEXT")
--- is marked not sent in the chat and its text goes back to the prompt area (`not_sent`).
local context = require("elelem.context")
local daemon = require("elelem.daemon")
local errors = require("elelem.errors")
local input = require("elelem.input")

local M = {}

--- How the daemon says a steer was not sent (protocol.md "Steering"): this, then its text.
M.NOT_SENT = "steer not sent (the turn ended first): "

--- The text of a steer the daemon says was not sent, from an `event/say`; else nil.
---@param params table
---@return string?
function M.unsent(params)
  local text = params.text
  if params.kind ~= "info" or params.parentToolCallId or type(text) ~= "string" then
    return nil
  end
  return vim.startswith(text, M.NOT_SENT) and text:sub(#M.NOT_SENT + 1) or nil
end

--- A steer the turn never took (it ended first): marked in the chat, and its text put back
--- in the prompt area, after what is there (a draft stays; several come in the order sent),
--- so nothing typed is lost.
---@param s elelem.Session
---@param text string
function M.not_sent(s, text)
  s.chat:notice("↪ " .. M.NOT_SENT .. text, "ElelemError")
  local buf = s:input()
  local draft = input.peek(buf)
  input.fill(buf, draft and (draft .. "\n\n" .. text) or text)
  if not s.unsent then -- said once a turn
    s.unsent = true
    s.chat:notice("(your steer is back in the prompt area)")
  end
end

--- A prompt sent while a turn runs: `session/steer`, a user message for the running turn
--- (protocol.md "Steering"). No turn running after all (`not_running`: it ended, or a
--- command runs) sends it as a turn, once what runs has answered. Any other refusal says
--- why and puts the text back in the prompt area. A steer carries no attachments.
---@param s elelem.Session
---@param text string
---@return boolean ok
---@return string? reason
function M.send(s, text)
  local _, found, problem = context.expand(text)
  if problem or #found > 0 then
    input.restore(s:input(), text)
    local reason = "elelem: a prompt sent while a turn runs is a steer, and a steer takes no "
      .. "#buffer, #selection or #diagnostics; your prompt waits in the prompt area"
    vim.notify(reason, vim.log.levels.WARN)
    return false, reason
  end
  s.held = s.held or {}
  s.chat:notice("↪ steer (queued): " .. text)
  if not s.id then -- the session is still being made: it goes as a turn after
    table.insert(s.held, text)
    return true
  end
  local epoch = s.epoch
  daemon.request("session/steer", { sessionId = s.id, text = text }, function(err)
    if epoch ~= s.epoch or not err then
      return -- taken: event/steer says when the turn sends it
    elseif errors.kind(err) == "not_running" then
      if s.busy then
        return table.insert(s.held, text) -- sent when what runs now has answered
      end
      s.chat:notice("(no turn was running: sent as a prompt)")
      return s:send(text)
    end
    s.chat:notice("steer not sent: " .. errors.message(err), "ElelemError")
    if input.restore(s:input(), text) then
      s.chat:notice("(your text is back in the prompt area)")
    end
    vim.notify("elelem: steer not sent: " .. errors.message(err), vim.log.levels.ERROR)
  end)
  return true
end

--- After a turn or command has answered: the prompts held for it (a steer that found no
--- turn running) go as turns; after a cancel they wait in the prompt area instead.
---@param s elelem.Session
function M.release(s)
  local held = s.held or {}
  s.held, s.unsent = {}, nil
  if #held == 0 then
    return
  end
  local text = table.concat(held, "\n\n")
  if s.cancelled then
    if input.restore(s:input(), text) then
      s.chat:notice("(the turn was cancelled: your steer waits in the prompt area)")
    end
    return
  end
  s.chat:notice("(no turn was running: sent as a prompt)")
  s:send(text)
end

return M
