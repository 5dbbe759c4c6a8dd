-- A real Neovim 0.11 in a tmux pane, driven as a user drives it: keys go in through the
-- terminal (`tmux send-keys`, one at a time at typing speed), what the user sees is read
-- back from the pane (`tmux capture-pane`) and from the editor over its `--listen` socket
-- (buffers, windows, mode). The editor runs this plugin against the real daemon (stub
-- provider), with the suite's HOME and XDG folders. `tui:shot(png)` renders the pane with
-- scripts/ansi2png.py (a README screenshot made by the test that checks it).
local H = require("spec.helpers")

local T = {}
T.__index = T

local count = 0

---@param args string[]
---@return string stdout
local function run(args)
  local out = vim.system(args, { text = true }):wait(20000)
  assert(out.code == 0, table.concat(args, " ") .. " failed: " .. tostring(out.stderr))
  return out.stdout or ""
end

--- Starts Neovim in a 120x40 tmux pane on `file` (relative to the project), with
--- `setup(extra)` and `init` (Lua run after setup). Stop it with `tui:stop()`.
---@param opts {file: string?, setup: table?, init: string?}?
function T.start(opts)
  opts = opts or {}
  count = count + 1
  local self = setmetatable({}, T)
  self.name = ("elelem-spec-%d-%d"):format(vim.fn.getpid(), count)
  self.sock = ("%s/%s.sock"):format(H.tmp, self.name)
  local init = ("%s/%s.lua"):format(H.tmp, self.name)
  local options = vim.tbl_deep_extend("force", vim.deepcopy(H.options), { questions = "chat" }, opts.setup or {})
  vim.fn.writefile({
    ("vim.opt.rtp:prepend(%q)"):format(H.root),
    "vim.o.termguicolors = true",
    "vim.o.laststatus = 3",
    "vim.o.showmode = true",
    "vim.o.swapfile = false",
    [[vim.o.statusline = "%f %m%=%{v:lua.require'elelem'.statusline()} "]],
    "_G.notes = {}",
    "local notify = vim.notify",
    "vim.notify = function(m, l, o) table.insert(_G.notes, m) return notify(m, l, o) end",
    ("require('elelem').setup(vim.json.decode(%q))"):format(vim.json.encode(options)),
    opts.init or "",
  }, init)
  local nvim = vim.v.progpath
  local cmd = ("cd %s && TERM=tmux-256color exec %s --listen %s -n -i NONE -u %s %s"):format(
    vim.fn.shellescape(H.project), vim.fn.shellescape(nvim), vim.fn.shellescape(self.sock),
    vim.fn.shellescape(init), vim.fn.shellescape(opts.file or ""))
  run({ "tmux", "-L", self.name, "-f", "/dev/null", "new-session", "-d", "-s", "t", "-x", "120", "-y", "40", cmd })
  run({ "tmux", "-L", self.name, "set", "-g", "default-terminal", "tmux-256color" })
  run({ "tmux", "-L", self.name, "set", "-ga", "terminal-overrides", ",*:Tc" })
  H.wait(function()
    if vim.uv.fs_stat(self.sock) == nil then
      return false
    end
    local ok, chan = pcall(vim.fn.sockconnect, "pipe", self.sock, { rpc = true })
    self.chan = ok and chan or nil
    return ok
  end, "the editor's socket")
  H.wait(function()
    return self:lua("return vim.v.vim_did_enter") == 1
  end, "the editor to start")
  -- the terminal has answered the editor's start-up queries: keys typed now are keys
  H.wait(function()
    return self:screen():find("%S") ~= nil and self:lua("return #vim.api.nvim_list_uis()") > 0
  end, "the screen")
  vim.wait(300)
  return self
end

--- Runs `code` (a Lua chunk; `...` are `args`) in the editor and returns its result.
function T:lua(code, ...)
  return vim.rpcrequest(self.chan, "nvim_exec_lua", code, { ... })
end

--- Keys by tmux name (`Escape`, `C-s`, `Enter`, or literal text), all at once.
function T:keys(...)
  run({ "tmux", "-L", self.name, "send-keys", "-t", "t", ... })
end

--- Types `text` one character at a time, `ms` (default 30) apart, as a person does.
---@param text string
---@param ms integer?
function T:type(text, ms)
  for _, char in ipairs(vim.fn.split(text, "\\zs")) do
    run({ "tmux", "-L", self.name, "send-keys", "-t", "t", "-l", char })
    vim.wait(ms or 30)
  end
end

--- `:line` and Enter, as typed from normal mode; with `escape`, Escape first and a wait
--- for normal mode (from the prompt area, in insert mode).
---@param line string
---@param escape boolean?
function T:command(line, escape)
  if escape then
    self:keys("Escape")
    self:wait("return vim.api.nvim_get_mode().mode == 'n'", "normal mode")
  end
  self:keys(":")
  self:keys("-l", line)
  self:keys("Enter")
end

--- Waits until the editor's `code` (returning a boolean) is true.
function T:wait(code, what, ms)
  H.wait(function()
    local ok, yes = pcall(self.lua, self, code)
    return ok and yes == true
  end, what, ms)
end

--- Waits until the pane shows `text`.
function T:see(text, ms)
  H.wait(function()
    return self:screen():find(text, 1, true) ~= nil
  end, ("%q on screen:\n%s"):format(text, self:screen()), ms)
end

--- The pane's text.
---@return string
function T:screen()
  return run({ "tmux", "-L", self.name, "capture-pane", "-p", "-t", "t" })
end

--- Renders the pane to `png` (the README's screenshots) when the run was asked for them:
--- `SCREENSHOTS=1 clients/nvim/test.sh` (needs Pillow in the venv; test.sh installs it then).
---@param png string
function T:shot(png)
  if os.getenv("SCREENSHOTS") ~= "1" then
    return
  end
  local ans = ("%s/%s.ans"):format(H.tmp, self.name)
  vim.fn.writefile(vim.split(run({ "tmux", "-L", self.name, "capture-pane", "-e", "-p", "-t", "t" }), "\n"), ans)
  if vim.system({ H.python, "-c", "import PIL" }):wait().code ~= 0 then
    return print("(no Pillow: " .. png .. " not remade)")
  end
  run({ H.python, H.root .. "/scripts/ansi2png.py", ans, png, "--columns", "120" })
end

--- The editor's mode (`nvim_get_mode`).
function T:mode()
  return self:lua("return vim.api.nvim_get_mode().mode")
end

--- Quits the editor (its daemon stops with it) and the tmux server.
function T:stop()
  pcall(vim.rpcrequest, self.chan, "nvim_exec_lua", "require('elelem.daemon').shutdown()", {})
  pcall(vim.rpcnotify, self.chan, "nvim_command", "qa!")
  vim.wait(300)
  pcall(vim.fn.chanclose, self.chan)
  vim.system({ "tmux", "-L", self.name, "kill-server" }):wait(5000)
end

return T
