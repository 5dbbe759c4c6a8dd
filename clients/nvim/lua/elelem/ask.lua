--- `input/ask`: the daemon asks the user something; `vim.ui.select` answers when there are
--- options, `vim.ui.input` otherwise. The handler runs inside the coroutine `vim.lsp.rpc`
--- gives server requests, so it yields until the user answers and never blocks the editor.
local requests = require("elelem.requests")

local M = {}

--- Shows a question (a permission's diff) and its answer in the asking session's chat
--- (both set by `elelem.init`).
---@type fun(params: table)
M.on_question = function() end
---@type fun(params: table, answer: string?, dismissed: boolean?)
M.on_answer = function() end

--- Diff lines a permission prompt shows before its question: those that fit the screen
--- (the whole diff is in the chat above).
---@param diff string
---@return string[]
local function diff_lines(diff)
  local lines = vim.split((diff:gsub("\n$", "")), "\n", { plain = true })
  local room = math.max(5, vim.o.lines - 10)
  if #lines > room then
    local more = #lines - room + 1
    lines = vim.list_slice(lines, 1, room - 1)
    table.insert(lines, ("… %d more lines: the whole diff is in the chat"):format(more))
  end
  return lines
end

--- What a question says. A permission's says it whole: the diff first, then the daemon's
--- question, then the call's `command` (or `path`) when the question does not hold it all
--- (the daemon cuts its question short; the built-in select shows nothing else).
---@param params table
---@return string
local function prompt_of(params)
  local tool = params.kind == "permission" and type(params.tool) == "table" and params.tool or nil
  local prompt = type(params.prompt) == "string" and params.prompt ~= "" and params.prompt or nil
  if params.kind == "authorize" then
    local url = type(params.url) == "string" and params.url or "?"
    local head = prompt or ("MCP server %s asks you to authorize it in a browser"):format(tostring(params.server))
    return head:find(url, 1, true) and head or (head .. "\n" .. url)
  elseif params.kind == "confirm" and type(params.tool) == "table" and type(params.tool.plan) == "table" then
    -- the daemon's question says the plan, its turns numbered as the user counts them;
    -- the editor adds what only it knows: the unsaved buffers of those files
    local s = require("elelem.session").find(params.sessionId)
    local cwd = s and s.info and s.info.cwd
    local lines = { prompt or "Rewind?" }
    if not prompt then
      vim.list_extend(lines, require("elelem.rewind").describe(params.tool.plan, cwd))
    end
    vim.list_extend(lines, require("elelem.rewind").unsaved(params.tool.plan, cwd))
    return table.concat(lines, "\n")
  end
  if not tool then
    return prompt or "elelem asks:"
  end
  local args = type(tool.arguments) == "table" and tool.arguments or {}
  if not prompt then
    local shown = vim.json.encode(next(args) and args or vim.empty_dict())
    prompt = ("Allow %s(%s)?"):format(tostring(tool.name or "?"), shown)
  end
  local lines = {}
  if type(tool.diff) == "string" and tool.diff ~= "" then
    vim.list_extend(lines, diff_lines(tool.diff))
  end
  table.insert(lines, prompt)
  for _, key in ipairs({ "command", "path" }) do
    local value = args[key]
    if type(value) == "string" and value ~= "" and not prompt:find(value, 1, true) then
      table.insert(lines, ("%s: %s"):format(key, value))
    end
  end
  return table.concat(lines, "\n")
end
M.prompt = prompt_of

--- Asks in the chat (`questions = "chat"`) or through `vim.ui`,
--- and calls `done(answer)` (nil when dismissed). Returns the chat question, if it is one.
---@param params table
---@param done fun(answer: string?)
---@return elelem.ChatQuestion?
function M.show(params, done)
  local options = params.options
  local chatask = require("elelem.chatask")
  local s = params.sessionId and require("elelem.session").find(params.sessionId)
  if s and chatask.enabled() then
    local shown = vim.deepcopy(params) -- its diff is in the chat already
    if type(shown.tool) == "table" then
      shown.tool.diff = nil
    end
    local strings = type(options) == "table" and vim.tbl_map(tostring, options) or {}
    return chatask.question(s, params, prompt_of(shown), strings, done)
  end
  local prompt = prompt_of(params)
  if type(options) == "table" and #options > 0 then
    vim.ui.select(options, { prompt = prompt, kind = "elelem." .. (params.kind or "question") }, function(choice)
      done(choice)
    end)
  else
    vim.ui.input({ prompt = prompt .. " " }, function(text)
      done(text)
    end)
  end
end

--- Whether an authorize question's `url` may be opened: http(s), no control characters.
---@param url any
---@return boolean
function M.openable(url)
  return type(url) == "string" and #url <= 8192 and url:match("^https?://[^%s%c]+$") ~= nil
end

---@type table<string, fun(answer: string?, dismissed: boolean?)> session id -> its open question
local open = {}

--- Gives up the open question of a session whose turn has ended (the daemon ignores late
--- answers): the built-in command-line prompt is closed; another UI's answer is ignored.
---@param session_id string
function M.dismiss(session_id)
  local finish = open[session_id]
  if not finish then
    return
  end
  finish(nil, true)
end

--- Closes the built-in prompts of `vim.ui.input` / `vim.ui.select` if one is waiting.
local function close_prompt()
  if vim.fn.getcmdtype() == "@" then -- vim.ui.input's input() is waiting
    vim.api.nvim_feedkeys(vim.keycode("<C-c>"), "n", false)
  end
end

--- The `input/ask` handler: returns `{text}` or `vim.NIL` (no answer).
---@param params table
---@param request_id any the request's id, for `$/cancelRequest`
---@return table|userdata
function M.answer(params, request_id)
  local co, main = coroutine.running()
  local answered, answer, yielded = false, nil, false
  local id = params.sessionId
  local finish, asked
  finish = function(text, dismissed)
    if answered then
      return
    end
    answered, answer = true, text
    requests.forget(request_id)
    require("elelem.chatask").close(asked) -- its answer lines no longer act
    if dismissed then
      close_prompt()
    end
    if open[id] == finish then
      open[id] = nil
    end
    M.on_answer(params, text, dismissed)
    if yielded then
      vim.schedule(function()
        coroutine.resume(co)
      end)
    end
  end
  if id and params.kind ~= "authorize" then -- an authorize question is outside any turn
    open[id] = finish
  end
  if not requests.on_cancel(request_id, function()
    finish(nil, true)
  end) then
    finish(nil, true)
    return vim.NIL
  end
  M.on_question(params)
  -- The built-in vim.ui.select blocks in inputlist() before the screen is painted again:
  -- paint what the question is about (the tool line, the diff) first.
  pcall(vim.cmd.redraw)
  asked = M.show(params, function(text)
    finish(text)
  end)
  if not answered then
    if main or not co then
      finish(nil, true)
      return vim.NIL -- no coroutine to wait in: no answer
    end
    yielded = true
    coroutine.yield()
  end
  if answer == nil then
    return vim.NIL
  end
  if params.kind == "authorize" and answer == "open" and not M.openable(params.url) then
    vim.notify("elelem: not opened (only http and https URLs are): " .. tostring(params.url), vim.log.levels.WARN)
  elseif params.kind == "authorize" and answer == "open" then
    local ok, err = pcall(vim.ui.open, params.url)
    if not ok then
      vim.notify("elelem: cannot open " .. params.url .. ": " .. tostring(err), vim.log.levels.WARN)
    end
  end
  return { text = answer }
end

return M
