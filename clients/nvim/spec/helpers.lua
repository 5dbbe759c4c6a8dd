-- Shared by the specs: load the plugin, point it at the real daemon, wait for things.
local H = {}

H.root = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h:h")
H.python = assert(os.getenv("ELELEM_PYTHON"), "run the specs with clients/nvim/test.sh")
H.tmp = assert(os.getenv("ELELEM_TEST_TMP"), "run the specs with clients/nvim/test.sh")
H.project = H.tmp .. "/project"

vim.opt.rtp:prepend(H.root)
vim.cmd("filetype on")
vim.cmd.runtime("plugin/elelem.lua")
vim.fn.mkdir(H.project, "p")
vim.fn.writefile({ "# A project", "", "It has a readme." }, H.project .. "/README.md")

H.notes = {}
vim.notify = function(message, level)
  table.insert(H.notes, { message = message, level = level })
end

H.options = {
  cmd = { H.python, "-m", "elelem_daemon" },
  provider = "stub",
  cwd = H.project,
  questions = "select", -- these specs answer through vim.ui (the old path); spec/tui.lua's ask in the chat
  -- the daemon's own folders are the suite's, whatever it inherits (test.sh sets them too)
  env = {
    ELELEM_LOG_LEVEL = "warning",
    ELELEM_CONTEXT_WINDOW = "1000", -- the stub's window, for the context meter
    HOME = H.tmp .. "/home",
    XDG_CONFIG_HOME = H.tmp .. "/config",
    XDG_DATA_HOME = H.tmp .. "/data",
    XDG_STATE_HOME = H.tmp .. "/state",
    XDG_CACHE_HOME = H.tmp .. "/cache",
  },
}

function H.setup(extra)
  require("elelem").setup(vim.tbl_deep_extend("force", vim.deepcopy(H.options), extra or {}))
end

--- Waits (generously) for `cond`; fails naming `what`.
function H.wait(cond, what, ms)
  local ok = vim.wait(ms or 30000, cond, 10)
  assert(ok, "timed out waiting for " .. what)
end

function H.session()
  return require("elelem.session").current()
end

function H.lines()
  return H.session().chat:text()
end

function H.text()
  return table.concat(H.lines(), "\n")
end

function H.idle()
  H.wait(function()
    return not H.session().busy
  end, "the turn to end")
end

--- Sends like the user does (`:Elelem text`) and waits for the answer.
function H.turn(text)
  vim.cmd("Elelem " .. text)
  H.idle()
end

--- The daemon process(es): Neovim's children.
function H.children()
  return vim.api.nvim_get_proc_children(vim.fn.getpid())
end

--- Messages given to vim.notify that contain `pattern` (plain).
function H.notified(pattern)
  local found = {}
  for _, note in ipairs(H.notes) do
    if note.message:find(pattern, 1, true) then
      table.insert(found, note)
    end
  end
  return found
end

--- Records daemon notifications (method, params) while the spec runs.
function H.record()
  local daemon = require("elelem.daemon")
  local seen = {}
  local original = daemon.handlers.notification
  daemon.handlers.notification = function(method, params)
    table.insert(seen, { method = method, params = params })
    original(method, params)
  end
  return seen, function()
    daemon.handlers.notification = original
  end
end

--- Stops this file's daemon. busted loads each spec file with fresh modules (insulation),
--- so every file must stop the daemon its modules started: use as `teardown(H.shutdown)`.
function H.shutdown()
  require("elelem.daemon").shutdown()
end

--- What the screen shows now (headless Neovim keeps its grid): one string per row.
function H.screen()
  local rows = {}
  for row = 1, vim.o.lines do
    local cells = {}
    for col = 1, vim.o.columns do
      table.insert(cells, vim.fn.screenstring(row, col))
    end
    rows[row] = table.concat(cells)
  end
  return table.concat(rows, "\n")
end

--- A fresh tab session and an empty notification log.
function H.reset()
  local s = H.session()
  if s.busy then
    s:cancel()
    H.idle()
  end
  s:reset()
  vim.cmd("silent! only")
  H.notes = {}
end

return H
