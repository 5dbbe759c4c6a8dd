--- `:ElelemModel [name]`: the model picker. The daemon says what there is, as `/model` and
--- `/provider` do: the models the provider's server lists (`session/complete` of
--- `/model `) and the providers (`/provider `); the choice runs that command in the chat,
--- where its answer shows, and the winbar follows.
local daemon = require("elelem.daemon")
local errors = require("elelem.errors")
local session = require("elelem.session")

local M = {}

local MAX = 200 -- entries offered, at most (a server may list thousands)

---@param s table the session
---@param text string
---@param done fun(items: string[])
local function complete(s, text, done)
  daemon.request("session/complete", { sessionId = s.id, text = text }, function(err, result)
    local items = not err and type(result) == "table" and type(result.items) == "table" and result.items or {}
    done(vim.tbl_filter(function(item)
      return type(item) == "string" and item ~= "" and not item:find("[%c%s]")
    end, vim.list_slice(items, 1, MAX)))
  end)
end

--- The picker's entries: the provider's models first, then the other providers.
---@param s table
---@param done fun(entries: {kind: "model"|"provider", name: string}[])
function M.entries(s, done)
  complete(s, "/model ", function(models)
    complete(s, "/provider ", function(providers)
      local entries = {}
      for _, name in ipairs(models) do
        table.insert(entries, { kind = "model", name = name })
      end
      for _, name in ipairs(providers) do
        table.insert(entries, { kind = "provider", name = name })
      end
      done(entries)
    end)
  end)
end

---@param name string?
function M.pick(name)
  local s = session.current()
  name = vim.trim(name or "")
  s:ensure(function(err)
    if err then
      return vim.notify("elelem: " .. errors.message(err), vim.log.levels.ERROR)
    end
    if name ~= "" then
      return s:send("/model " .. name)
    end
    M.entries(s, function(entries)
      if #entries == 0 then
        return vim.notify("elelem: the daemon lists no models or providers", vim.log.levels.WARN)
      end
      local info = s.info or {}
      vim.ui.select(entries, {
        prompt = ("elelem model (now %s · %s)"):format(info.provider or "?", s:model() or "?"),
        kind = "elelem.model",
        format_item = function(e)
          local now = (e.kind == "model" and e.name == s:model()) or (e.kind == "provider" and e.name == info.provider)
          return ("%s %s%s"):format(e.kind, e.name, now and " (current)" or "")
        end,
      }, function(choice)
        if choice then
          s:show(nil)
          s:send(("/%s %s"):format(choice.kind, choice.name))
        end
      end)
    end)
  end)
end

return M
