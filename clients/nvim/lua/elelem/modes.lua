--- Modes (issue 20, /work/wt/CONTRACT20.md): `:ElelemMode` through `session/setMode`, the
--- mode ids for completion, and the statusline component. The session keeps the mode
--- (`session/new`'s `mode`, then `event/mode`) and shows it in the chat's winbar.
local daemon = require("elelem.daemon")
local errors = require("elelem.errors")
local session = require("elelem.session")

local M = {}

--- `:ElelemMode [name]`: switches this tab's session to mode `name` (`session/setMode`),
--- or picks one from the session's modes.
---@param name string?
function M.pick(name)
  local s = session.current()
  name = name and vim.trim(name) or ""
  s:ensure(function(err)
    if err then
      return vim.notify("elelem: " .. errors.message(err), vim.log.levels.ERROR)
    end
    local function set(id)
      daemon.request("session/setMode", { sessionId = s.id, modeId = id }, function(serr, result)
        if serr then
          local data = type(serr.data) == "table" and serr.data or {}
          local known = type(data.modes) == "table" and (" (modes: " .. table.concat(data.modes, ", ") .. ")") or ""
          return vim.notify("elelem: " .. errors.message(serr) .. known, vim.log.levels.ERROR)
        end
        s:set_mode(result and result.mode)
      end)
    end
    if name ~= "" then
      return set(name)
    end
    local mode = s.info and s.info.mode
    local available = type(mode) == "table" and mode.available or {}
    if #available == 0 then
      return vim.notify("elelem: this daemon has no modes", vim.log.levels.WARN)
    end
    vim.ui.select(available, {
      prompt = "elelem mode",
      kind = "elelem.mode",
      format_item = function(m)
        local current = m.id == mode.current and " (current)" or ""
        return ("%s%s — %s"):format(m.name or m.id, current, m.description or "")
      end,
    }, function(choice)
      if choice then
        set(choice.id)
      end
    end)
  end)
end

--- The mode ids of this tab's session, for completion.
---@return string[]
function M.names()
  local s = session.sessions[vim.api.nvim_get_current_tabpage()]
  local mode = s and s.info and s.info.mode
  return vim.tbl_map(function(m)
    return m.id
  end, type(mode) == "table" and mode.available or {})
end

--- A statusline component: "" without a session, else "elelem:MODE" and "…" while a turn
--- runs (e.g. `vim.o.statusline = "%f %=%{v:lua.require'elelem'.statusline()}"`).
---@return string
function M.statusline()
  local s = session.sessions[vim.api.nvim_get_current_tabpage()]
  if not s or not s.id then
    return ""
  end
  local pending = 0
  for _, r in ipairs(require("elelem.review").open) do
    if r.params.sessionId == s.id then
      pending = pending + 1
    end
  end
  local asking = false
  for _, q in ipairs(require("elelem.chatask").open) do
    asking = asking or q.session == s
  end
  local meter = require("elelem.meter").short_text(s.meter)
  return ("elelem:%s%s%s%s%s"):format(s:mode() or "build", meter ~= "" and " " .. meter or "", s.busy and " …" or "",
    pending > 0 and " [review]" or "", asking and " [question]" or "")
end

return M
