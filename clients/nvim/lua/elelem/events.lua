--- Daemon notifications and the daemon's end, routed to the sessions they concern.
local session = require("elelem.session")

local M = {}

--- Routes a daemon notification to its session's chat.
---@param method string
---@param params table
function M.on_notification(method, params)
  local s = type(params) == "table" and session.find(params.sessionId)
  if not s then
    return
  end
  local c = s.chat
  if params.parentToolCallId and (method == "event/saying" or method == "event/thinking") then
    return -- a sub-agent's stream: its final answer is the task call's result
  end
  if method == "event/saying" then
    c:push("saying", tostring(params.text or ""))
  elseif method == "event/thinking" then
    c:push("thinking", tostring(params.text or ""))
  elseif method == "event/doing" then
    c:doing(params)
  elseif method == "event/result" then
    c:result(params)
  elseif method == "event/say" then
    local unsent = require("elelem.steer").unsent(params)
    if unsent then
      require("elelem.steer").not_sent(s, unsent)
    else
      c:say(params)
    end
  elseif method == "event/mcp" then
    s:mcp_status(params.mcp)
  elseif method == "event/plan" then
    c:plan(params.entries)
  elseif method == "event/mode" then
    s:set_mode(params.mode)
  elseif method == "event/usage" then
    c.meter = params -- the turn's summary shows it (Chat:finish)
    s.meter = params -- and the winbar, always in view (elelem.meter)
    if type(params.servedModel) == "string" and s.info then
      s.info.servedModel = params.servedModel -- the model that answers, once the server said
    end
    s:refresh()
  elseif method == "event/steer" then
    c:notice("↪ steered: " .. tostring(params.text or ""))
  end
end

--- The daemon is gone: every session must be created again on its next prompt.
---@param expected boolean
function M.on_daemon_exit(expected)
  session.forget()
  require("elelem.context").reset()
  for tab, s in pairs(session.sessions) do
    if not vim.api.nvim_tabpage_is_valid(tab) then
      session.sessions[tab] = nil
    elseif s.id then
      s.id, s.info, s.creating = nil, nil, nil
      if not expected then
        s.chat:notice("(the daemon stopped: the next prompt starts a new session)")
      end
      s:refresh()
    end
  end
end

return M
