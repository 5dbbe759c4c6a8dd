--- Steering (protocol.md "Steering"): a prompt sent while a turn runs is a `session/steer`,
--- a user message the running turn sends with its next provider request. No turn running
--- after all (`not_running`: it ended, or a command runs) sends it as a turn, once what
--- runs has answered (`release`). Any other refusal says why and keeps the text.
local context = require("elelem.context")
local daemon = require("elelem.daemon")
local errors = require("elelem.errors")
local input = require("elelem.input")

local M = {}

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
  s.held = {}
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
