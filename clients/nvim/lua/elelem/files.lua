--- The daemon works through the editor (protocol.md, "Files" and `fs/*`): `files/read`
--- serves a loaded buffer's text (unsaved changes included) with `b:changedtick` as its
--- version; `files/propose` checks for a conflict, shows the review (elelem.review) when
--- asked, and applies what the user accepted to the buffer as one undo step; `fs/read_text_file`
--- and `fs/write_text_file` are ACP's whole-text forms of the same.
local buffers = require("elelem.buffers")
local requests = require("elelem.requests")
local review = require("elelem.review")

local M = {}

--- Called with each answered proposal (set by `elelem.init`: a line in the chat).
---@type fun(params: table, answer: table)
M.on_outcome = function() end

---@param params table
---@return table|userdata
function M.read(params)
  local buf = buffers.find(params and params.path)
  if not buf then
    return vim.NIL
  end
  return { text = buffers.text(buf), version = buffers.version(buf) }
end

--- Whether the buffer no longer holds what the change was made from.
---@param buf integer
---@param params table
---@return boolean
local function conflicts(buf, params)
  -- The text decides: a changedtick other than `baseVersion` may be an undo back to it.
  local old = type(params.oldText) == "string" and params.oldText or ""
  return buffers.text(buf) ~= old
end

---@param hunks table[]
---@return integer[]
local function all_ids(hunks)
  return vim.tbl_map(function(h)
    return h.id
  end, hunks)
end

--- The answer for `accepted` hunk ids, applying them to `buf` when there is one.
---@param params table
---@param buf integer?
---@param decision elelem.Decision
---@return table
local function settle(params, buf, decision)
  local ids = decision.accepted
  if buf and (not vim.api.nvim_buf_is_valid(buf) or conflicts(buf, params)) then
    return { outcome = "conflict", acceptedHunks = {} }
  end
  if #ids == 0 then
    return { outcome = "rejected", acceptedHunks = {}, reason = decision.reason }
  end
  local old = type(params.oldText) == "string" and params.oldText or nil
  local text = #ids == #params.hunks and params.newText or buffers.apply_hunks(old, params.newText, params.hunks, ids)
  if buf then
    local clean = not vim.bo[buf].modified
    local before = buffers.text(buf)
    buffers.set(buf, text)
    if clean and require("elelem.config").options.review.save then
      M.save(buf) -- nothing of the user's is written: the disk now matches what the agent sees
    else -- only in the buffer: a rewind of this turn takes it out there (elelem.restore)
      require("elelem.restore").note(tostring(params.sessionId), buf, params.path, before, buffers.text(buf))
    end
  end
  return {
    outcome = #ids == #params.hunks and "accepted" or "partial",
    acceptedHunks = ids,
    text = text,
    applied = buf ~= nil,
    reason = decision.reason,
    acceptAllForTurn = decision.acceptAllForTurn,
  }
end

local MAX_HUNKS = 10000

---@param n any
---@return boolean
local function count(n)
  return type(n) == "number" and n >= 0 and n == math.floor(n) and n < 2 ^ 31
end

--- What is wrong with a `files/propose`'s params (protocol.md's shapes), or nil.
---@param params any
---@return string?
function M.invalid(params)
  if type(params) ~= "table" then
    return "params must be an object"
  elseif type(params.path) ~= "string" or params.path:sub(1, 1) ~= "/" then
    return "path must be an absolute path"
  elseif type(params.newText) ~= "string" then
    return "newText must be a string"
  elseif params.oldText ~= nil and params.oldText ~= vim.NIL and type(params.oldText) ~= "string" then
    return "oldText must be a string or null"
  elseif type(params.hunks) ~= "table" or not vim.islist(params.hunks) or #params.hunks == 0 then
    return "hunks must be a non-empty list"
  elseif #params.hunks > MAX_HUNKS then
    return ("hunks: more than %d"):format(MAX_HUNKS)
  end
  local seen = {}
  for i, h in ipairs(params.hunks) do
    local where = ("hunks[%d]"):format(i - 1)
    if type(h) ~= "table" then
      return where .. " must be an object"
    end
    for _, key in ipairs({ "id", "oldStart", "oldLines", "newStart", "newLines" }) do
      if not count(h[key]) then
        return ("%s.%s must be a whole number >= 0"):format(where, key)
      end
    end
    if seen[h.id] then
      return ("%s.id %d is repeated"):format(where, h.id)
    end
    seen[h.id] = true
    if type(h.diff) ~= "string" then
      return where .. ".diff must be a string"
    end
  end
  return nil
end

--- `files/propose`: runs in the request's coroutine and yields while the user reviews.
---@param params table
---@param id any the request's id, for `$/cancelRequest`
---@return table
function M.propose(params, id)
  local problem = M.invalid(params)
  if problem then
    return nil, vim.lsp.rpc.rpc_response_error(-32602, "files/propose: " .. problem)
  end
  local buf = buffers.find(params.path)
  local answer
  if buf and conflicts(buf, params) then
    answer = { outcome = "conflict", acceptedHunks = {} }
  elseif not params.review then
    answer = settle(params, buf, { accepted = all_ids(params.hunks) })
  else
    local co = coroutine.running()
    local decision
    local r = review.start(params, buf ~= nil, function(d)
      decision = d
      requests.forget(id)
      vim.schedule(function()
        coroutine.resume(co)
      end)
    end)
    if not requests.on_cancel(id, function()
      r:finish({ accepted = {}, closed = true })
    end) then
      r:finish({ accepted = {}, closed = true })
    end
    if not decision then
      coroutine.yield()
    end
    answer = settle(params, buf, decision)
  end
  M.on_outcome(params, answer)
  return answer
end

--- Writes `buf` without its autocommands (a format-on-save would change the text the
--- daemon was told); a failure is said, not raised: the change is in the buffer.
---@param buf integer
function M.save(buf)
  local ok, err = pcall(vim.api.nvim_buf_call, buf, function()
    vim.cmd("silent noautocmd keepalt write")
  end)
  if not ok then
    vim.notify("elelem: the change is in the buffer but could not be written: " .. tostring(err), vim.log.levels.WARN)
  end
end

--- `fs/read_text_file`: the buffer's text, or -32002 (the daemon reads the disk).
---@param params table
function M.read_text_file(params)
  local buf = buffers.find(params and params.path)
  if not buf then
    return nil, vim.lsp.rpc.rpc_response_error(-32002, "no buffer of " .. tostring(params and params.path))
  end
  return { content = buffers.text(buf) }
end

--- `fs/write_text_file`: into the loaded buffer (one undo step, then written if it had no
--- unsaved changes), else to the disk.
---@param params table
function M.write_text_file(params)
  if type(params) ~= "table" or type(params.path) ~= "string" or params.path:sub(1, 1) ~= "/"
    or type(params.content) ~= "string" then
    return nil, vim.lsp.rpc.rpc_response_error(-32602, "fs/write_text_file: an absolute path and a string content are required")
  end
  local buf = buffers.find(params.path)
  if buf then
    local clean = not vim.bo[buf].modified
    buffers.set(buf, params.content)
    if clean then
      M.save(buf)
    end
    return vim.NIL
  end
  local fd, err = vim.uv.fs_open(params.path, "w", 420)
  if not fd then
    return nil, vim.lsp.rpc.rpc_response_error(-32603, "cannot write " .. params.path .. ": " .. tostring(err))
  end
  local ok, werr = vim.uv.fs_write(fd, params.content)
  vim.uv.fs_close(fd)
  if not ok then
    return nil, vim.lsp.rpc.rpc_response_error(-32603, "cannot write " .. params.path .. ": " .. tostring(werr))
  end
  return vim.NIL
end

return M
