--- The daemon's requests it may withdraw (`$/cancelRequest {id}`: a review or a question
--- that timed out, or whose turn was cancelled): each handler registers what closes it.
local M = {}

--- `id` -> what closes it.
---@type table<any, fun()>
local cancellers = {}
---@type table<any, boolean> ids cancelled before their handler started
local cancelled = {}
local count = 0

--- `$/cancelRequest {id}` from the daemon: the request is withdrawn.
---@param id any
function M.cancel(id)
  local fn = cancellers[id]
  if fn then
    cancellers[id] = nil
    fn()
  elseif id ~= nil then
    if count >= 256 then -- ids of requests already answered: forget them, bounded
      cancelled, count = {}, 0
    end
    cancelled[id], count = true, count + 1
  end
end

--- Registers what closes request `id`; false when it was cancelled already.
---@param id any
---@param fn fun()
---@return boolean
function M.on_cancel(id, fn)
  if id == nil then
    return true
  end
  if cancelled[id] then
    cancelled[id] = nil
    return false
  end
  cancellers[id] = fn
  return true
end

---@param id any
function M.forget(id)
  if id ~= nil then
    cancellers[id] = nil
  end
end

return M
