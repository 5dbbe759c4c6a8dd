--- `input/ask`: the daemon asks the user something; `vim.ui.select` answers when there are
--- options, `vim.ui.input` otherwise. The handler runs inside the coroutine `vim.lsp.rpc`
--- gives server requests, so it yields until the user answers and never blocks the editor.
local M = {}

--- Shows a question (a permission's diff) and its answer in the asking session's chat
--- (both set by `elelem.init`).
---@type fun(params: table)
M.on_question = function() end
---@type fun(params: table, answer: string?)
M.on_answer = function() end

---@param params table
---@return string
local function prompt_of(params)
  if params.kind == "permission" and type(params.tool) == "table" then
    local args = vim.json.encode(params.tool.arguments or vim.empty_dict())
    return ("Allow %s(%s)?"):format(params.tool.name or "?", args)
  end
  return tostring(params.prompt or "elelem asks:")
end

--- Asks through `vim.ui` and calls `done(answer)` (nil when dismissed).
---@param params table
---@param done fun(answer: string?)
function M.show(params, done)
  local prompt = prompt_of(params)
  local options = params.options
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

--- The `input/ask` handler: returns `{text}` or `vim.NIL` (no answer).
---@param params table
---@return table|userdata
function M.answer(params)
  local co, main = coroutine.running()
  local answered, answer, yielded = false, nil, false
  M.on_question(params)
  M.show(params, function(text)
    if answered then
      return
    end
    answered, answer = true, text
    M.on_answer(params, text)
    if yielded then
      vim.schedule(function()
        coroutine.resume(co)
      end)
    end
  end)
  if not answered then
    if main or not co then
      return vim.NIL -- no coroutine to wait in (Neovim < 0.10 style dispatch): no answer
    end
    yielded = true
    coroutine.yield()
  end
  if answer == nil then
    return vim.NIL
  end
  return { text = answer }
end

return M
