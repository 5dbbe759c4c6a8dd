--- `/shell [command]` is the client's: a terminal in the session's directory. When it
--- ends, its transcript waits in the prompt area (the protocol cannot add a message
--- without a turn), to be sent with a question.
local config = require("elelem.config")
local input = require("elelem.input")

local M = {}

local api = vim.api

--- Runs `/shell [command]` for session `self`.
---@param self elelem.Session
---@param command string
---@return boolean
function M.run(self, command)
  local cwd = self.info and self.info.cwd or config.cwd()
  local argv = command ~= "" and { vim.o.shell, vim.o.shellcmdflag, command } or { vim.o.shell }
  vim.cmd("botright new")
  local buf = api.nvim_get_current_buf()
  local opts = {
    cwd = cwd,
    on_exit = function()
      vim.schedule(function()
        M.transcript(self, buf, command)
      end)
    end,
  }
  if vim.fn.has("nvim-0.11") == 1 then
    opts.term = true
    vim.fn.jobstart(argv, opts)
  else
    vim.fn.termopen(argv, opts)
  end
  if #api.nvim_list_uis() > 0 then
    vim.cmd.startinsert()
  end
  return true
end

---@param self elelem.Session
---@param buf integer the ended terminal
---@param command string
function M.transcript(self, buf, command)
  if not api.nvim_buf_is_valid(buf) then
    return
  end
  local lines = api.nvim_buf_get_lines(buf, 0, -1, false)
  while #lines > 0 and (vim.trim(lines[#lines]) == "" or lines[#lines]:match("^%[Process exited %d+%]$")) do
    table.remove(lines)
  end
  api.nvim_buf_delete(buf, { force = true })
  if command ~= "" then
    table.insert(lines, 1, "$ " .. command)
  end
  self:show("input")
  input.fill(self:input(), table.concat({ "", "", "Shell session:", "", "```", table.concat(lines, "\n"), "```" }, "\n"))
  api.nvim_win_set_cursor(0, { 1, 0 })
end

return M
