--- The context meter (issue 40): how full the model's window is, how much of the prompt the
--- provider's cache served, the session's cost, and a warning shortly before the daemon
--- compacts on its own (`compactAt` of `event/usage`, ELELEM_COMPACT_AT). Shown in the
--- chat's winbar, always in view while the chat is, and in `statusline()`.
local M = {}

M.WARN_BEFORE = 0.10 -- the warning shows this share of the window before compactAt

---@param n number
---@return string
function M.short(n)
  if n >= 1e6 then
    return ("%.1fM"):format(n / 1e6)
  elseif n >= 1000 then
    return ("%.1fk"):format(n / 1000)
  end
  return tostring(math.floor(n))
end

---@param meter table? the last `event/usage`
---@return {used: number, size: number, share: number}?
local function fill(meter)
  if type(meter) ~= "table" then
    return nil
  end
  local used, size = tonumber(meter.used), tonumber(meter.size)
  if not used or not size or size <= 0 or used < 0 then
    return nil
  end
  return { used = used, size = size, share = math.min(used / size, 9.99) }
end

--- The warning, or nil: "auto-compacts at 85%" once the context is past compactAt - 10 %.
---@param meter table?
---@return string?
function M.warning(meter)
  local f = fill(meter)
  local at = type(meter) == "table" and tonumber(meter.compactAt) or nil
  if not f or not at or at <= 0 or at > 1 then
    return nil
  end
  if f.share >= at - M.WARN_BEFORE then
    return ("auto-compacts at %d%%"):format(math.floor(at * 100 + 0.5))
  end
  return nil
end

--- The winbar's meter: "ctx 800/1.0k 80% · 88% cached · $0.0108 · ⚠ auto-compacts at 85%".
---@param meter table?
---@return string
function M.text(meter)
  if type(meter) ~= "table" then
    return ""
  end
  local parts = {}
  local f = fill(meter)
  if f then
    table.insert(parts, ("ctx %s/%s %d%%"):format(M.short(f.used), M.short(f.size), math.floor(f.share * 100)))
  end
  local input, read = tonumber(meter.inputTokens), tonumber(meter.cacheReadTokens)
  if input and read and input > 0 and read > 0 then
    table.insert(parts, ("%d%% cached"):format(math.floor(math.min(read / input, 1) * 100)))
  end
  local cost = type(meter.session) == "table" and tonumber(meter.session.cost)
  if cost then
    table.insert(parts, ("$%.4f"):format(cost))
  end
  local warning = M.warning(meter)
  if warning then
    table.insert(parts, "⚠ " .. warning)
  end
  return table.concat(parts, " · ")
end

--- The statusline's part: "80%" (with "!" past the warning line), "" when unknown.
---@param meter table?
---@return string
function M.short_text(meter)
  local f = fill(meter)
  if not f then
    return ""
  end
  return ("%d%%%s"):format(math.floor(f.share * 100), M.warning(meter) and "!" or "")
end

return M
