-- Issue 40's Neovim traps, as the user met them: keys typed into a real terminal
-- (spec/tui.lua), the screen, the buffers and the disk checked. `<C-c>` cancels right
-- after `<C-s>` (insert mode kept) and from normal mode; `q` in the chat closes nothing
-- (`:ElelemClose` does), so the next keys never reach the file; the user's prompt shows as
-- typed (no Markdown concealed); a failed call is `✗ exit N`; installing the plugin as the
-- README says leaves no untracked file in the repository.
local H = require("spec.helpers")
local T = require("spec.tui")

local IDLE = "return not require('elelem.session').current().busy"
local SMALL = { "one", "two", "three" }

--- The lines of `small.txt`'s buffer in the editor (what the user's keys would change).
local function file_lines(tui)
  return tui:lua("return vim.api.nvim_buf_get_lines(vim.fn.bufnr(...), 0, -1, false)", H.project .. "/small.txt")
end

local function chat_shown(tui)
  return tui:lua("return vim.fn.bufwinid(require('elelem.session').current().chat:buffer()) ~= -1")
end

describe("issue 40's traps under real hands", function()
  local tui

  before_each(function()
    vim.fn.writefile(SMALL, H.project .. "/small.txt")
  end)

  after_each(function()
    if tui then
      tui:stop()
      tui = nil
    end
  end)

  it("<C-c> cancels the turn <C-s> sent, still in insert mode", function()
    tui = T.start({ file = "small.txt" })
    tui:command("Elelem", true) -- the prompt area, in insert mode
    tui:wait("return vim.b.elelem_prompt == true and vim.api.nvim_get_mode().mode == 'i'", "the prompt area")
    tui:type("!stream 3000 20") -- a minute of tokens: it runs until cancelled
    tui:keys("C-s")
    tui:see("tok5 ")
    assert.are.equal("i", tui:mode()) -- <C-s> kept insert mode
    assert.is_true(tui:lua("return require('elelem.session').current().busy"))
    tui:keys("C-c")
    tui:see("[cancelled]")
    tui:wait(IDLE, "the turn to end")
    assert.are.equal("i", tui:mode()) -- one press, and the user goes on typing
    tui:type("next")
    tui:wait("return vim.deep_equal(vim.api.nvim_buf_get_lines(0, 0, -1, false), { 'next' })", "the typing to go on")
    assert.is_nil(tui:screen():find("tok2999", 1, true))
  end)

  it("<C-c> cancels from normal mode, in the prompt area and in the chat", function()
    tui = T.start({ file = "small.txt" })
    tui:command("Elelem !stream 3000 20", true)
    tui:see("tok5 ")
    tui:wait("return vim.b.elelem_prompt == true", "the prompt area")
    tui:keys("Escape")
    tui:wait("return vim.api.nvim_get_mode().mode == 'n'", "normal mode")
    tui:keys("C-c")
    tui:see("[cancelled]")
    tui:wait(IDLE, "the first turn to end")
    tui:command("Elelem !stream 3000 20", true)
    tui:wait("return require('elelem.session').current().busy", "the second turn")
    tui:keys("C-w", "k")
    tui:wait("return vim.b.elelem_chat == true", "the chat")
    tui:keys("C-c")
    tui:wait(IDLE, "the second turn to end")
    local _, cancels = table.concat(tui:lua("return require('elelem.session').current().chat:text()"), "\n")
      :gsub("%[cancelled%]", "")
    assert.are.equal(2, cancels)
  end)

  it("q in the chat or the prompt area closes nothing; the next keys stay out of the file", function()
    tui = T.start({ file = "small.txt" })
    tui:command("Elelem !echo answered", true)
    tui:see("answered")
    tui:wait(IDLE, "the turn to end")
    -- in the chat: q, then what the user types next (x, dd) as if the chat had closed
    tui:keys("C-w", "k")
    tui:wait("return vim.b.elelem_chat == true", "the chat")
    tui:keys("q", "x", "x", "d", "d")
    tui:keys("q", "Escape") -- the recording q started, stopped (had q closed the chat: a q cancelled)
    -- the keys were read in the chat: q recorded the next ones (x d d) in register x
    tui:wait("return vim.fn.reg_recording() == '' and vim.fn.getreg('x') == 'xdd'", "the recording in register x")
    assert.is_true(chat_shown(tui))
    assert.is_true(tui:lua("return vim.b.elelem_chat == true"))
    assert.are.same(SMALL, file_lines(tui))
    -- in the prompt area, in normal mode: the same
    tui:keys("C-w", "j")
    tui:wait("return vim.b.elelem_prompt == true", "the prompt area")
    tui:keys("q", "z", "x", "d", "d")
    tui:keys("q", "Escape")
    tui:wait("return vim.fn.reg_recording() == '' and vim.fn.getreg('z') == 'xdd'", "the recording in register z")
    assert.is_true(chat_shown(tui))
    assert.are.same(SMALL, file_lines(tui))
    assert.are.same(SMALL, vim.fn.readfile(H.project .. "/small.txt"))
    -- :ElelemClose closes the chat and its prompt area; the file is the window left
    tui:command("ElelemClose", true)
    tui:wait("return vim.fn.bufwinid(require('elelem.session').current().chat:buffer()) == -1", "the chat to close")
    tui:wait("return vim.fn.bufwinid(require('elelem.session').current():input()) == -1", "the prompt area to close")
    H.wait(function() -- the screen redrawn without the chat
      return tui:screen():find("answered", 1, true) == nil
    end, "the chat gone from the screen:\n" .. tui:screen())
    assert.are.equal(H.project .. "/small.txt", tui:lua("return vim.api.nvim_buf_get_name(0)"))
  end)

  it("the user's prompt shows as typed: no Markdown concealed", function()
    tui = T.start({ file = "small.txt" })
    tui:command("Elelem", true) -- the prompt area, in insert mode
    tui:wait("return vim.b.elelem_prompt == true and vim.api.nvim_get_mode().mode == 'i'", "the prompt area")
    tui:type("!echo a ** b and __init__ and *x*")
    tui:keys("C-s")
    tui:wait(IDLE, "the turn to end")
    tui:see("!echo a ** b and __init__ and *x*")
  end)

  it("a failed call is ✗ with its exit status: list of a missing path, execute of false", function()
    tui = T.start({ file = "small.txt" })
    tui:command('Elelem !tools [["list",{"path":"missing"}],["grep",{"pattern":"no such words here"}]]', true)
    tui:wait(IDLE, "the turn to end")
    tui:see('list({"path":"missing"}) ✗ exit 2')
    tui:see(") ✓") -- grep finding nothing is no failure
    tui:command('Elelem !tool execute {"command":"false"}', true)
    tui:see("1 → allow")
    tui:keys("C-w", "k")
    tui:wait("return vim.b.elelem_chat == true", "the chat")
    tui:keys("A")
    tui:see("1: allow")
    tui:type("1")
    tui:keys("Enter")
    tui:wait(IDLE, "the second turn to end")
    tui:see('execute({"command":"false"}) ✗ exit 1')
  end)

  it("installing the plugin as the README says leaves no untracked file (doc/tags)", function()
    local repo = vim.fn.fnamemodify(H.root, ":h:h")
    assert.are.equal(0, vim.system({ "git", "-C", repo, "rev-parse" }):wait().code, "a git checkout")
    local tags = H.root .. "/doc/tags"
    local had = vim.uv.fs_stat(tags) ~= nil
    vim.fn.delete(tags)
    -- the README's plain packpath install, in the suite's XDG_DATA_HOME
    local start = os.getenv("XDG_DATA_HOME") .. "/nvim/site/pack/elelem/start"
    vim.fn.mkdir(start, "p")
    local link = start .. "/elelem.nvim"
    assert(vim.uv.fs_symlink(H.root, link))
    local ok, err = pcall(function()
      local name = ("elelem-install-%d"):format(vim.fn.getpid())
      local cmd = ("cd %s && TERM=tmux-256color exec %s -c 'helptags ALL' -c q"):format(
        vim.fn.shellescape(H.project), vim.fn.shellescape(vim.v.progpath))
      vim.system({ "tmux", "-L", name, "-f", "/dev/null", "new-session", "-d", "-s", "t", "-x", "120", "-y", "40", cmd })
        :wait(20000)
      local ended = vim.wait(30000, function()
        return vim.system({ "tmux", "-L", name, "has-session", "-t", "t" }):wait().code ~= 0
      end, 100)
      if not ended then
        local screen = vim.system({ "tmux", "-L", name, "capture-pane", "-p", "-t", "t" }, { text = true }):wait()
        vim.system({ "tmux", "-L", name, "kill-server" }):wait(5000)
        error("nvim -c 'helptags ALL' -c q did not end:\n" .. tostring(screen.stdout))
      end
      assert.is_not_nil(vim.uv.fs_stat(tags), "helptags wrote " .. tags)
      assert.matches("elelem", table.concat(vim.fn.readfile(tags), "\n"))
      local out = vim.system({ "git", "-C", repo, "status", "--porcelain", "--untracked-files=all", "--",
        "clients/nvim/doc" }, { text = true }):wait()
      assert.are.equal(0, out.code)
      assert.are.equal("", out.stdout)
    end)
    vim.uv.fs_unlink(link)
    if not had then
      vim.fn.delete(tags)
    end
    assert(ok, err)
  end)
end)
