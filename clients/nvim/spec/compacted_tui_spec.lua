-- The whole conversation after a compaction (issue 40), as the user meets it: turns typed
-- in the prompt area, `/compact` typed there too, one more turn; then Neovim quits, starts
-- again, and `:ElelemResume` brings the session back: every turn's prompt is in the chat,
-- with the "compacted here" marker where the compaction was (the model reads the summary;
-- the user keeps the transcript). Driven through a real terminal (spec/tui.lua).
local H = require("spec.helpers")
local T = require("spec.tui")

local IDLE = "return not require('elelem.session').current().busy"
local PROMPTS = { "!echo first answer", "!echo second answer", "!echo third answer" }
local AFTER = "!echo after the compaction"
local MARKER = "(context compacted here"

--- Types `text` in the prompt area (insert mode), sends it with <C-s> and waits for `done`
--- (Lua in the editor) with no turn running.
local function send(tui, text, done)
  tui:type(text)
  tui:keys("C-s")
  tui:wait(IDLE .. " and " .. done, text .. " to end")
end

local function turns(n)
  return ("#require('elelem.session').current().turns == %d"):format(n)
end

describe("the conversation after a compaction", function()
  local tui
  local dir = H.tmp .. "/compacted"
  -- a window wide enough that only /compact compacts
  local setup = { cwd = dir, env = { ELELEM_CONTEXT_WINDOW = "200000" } }

  before_each(function()
    vim.fn.mkdir(dir, "p")
  end)

  after_each(function()
    if tui then
      tui:stop()
      tui = nil
    end
  end)

  it("is all in the chat after a restart and :ElelemResume, marked where it was compacted", function()
    tui = T.start({ file = "README.md", setup = setup })
    tui:command("Elelem", true) -- the prompt area, in insert mode
    tui:wait("return vim.b.elelem_prompt == true and vim.api.nvim_get_mode().mode == 'i'", "the prompt area")
    for n, prompt in ipairs(PROMPTS) do
      send(tui, prompt, turns(n))
      tui:see(prompt:sub(7))
    end
    send(tui, "/compact", "table.concat(require('elelem.session').current().chat:text(), '\\n'):find('compacted:') ~= nil")
    send(tui, AFTER, turns(4))
    local id = tui:lua("return require('elelem.session').current().id")
    tui:stop()

    tui = T.start({ file = "README.md", setup = setup })
    tui:command("ElelemResume", true)
    tui:wait(("return require('elelem.session').current().id == %q"):format(id), "the session to load")
    tui:see(AFTER)
    tui:see(MARKER)
    -- in the chat buffer: every prompt, as typed, in order, the marker after the third
    local lines = tui:lua("return require('elelem.session').current().chat:text()")
    -- (a prompt: the line under a `## You` heading; the summary the compaction left, which
    -- quotes the user's words, is drawn dim after the marker, no prompt of the user's)
    local order = {}
    for i, line in ipairs(lines) do
      local typed = line == "## You" and (lines[i + 2] or ""):match("^    (!echo .*)$")
      if typed then
        table.insert(order, typed)
      elseif line:find(MARKER, 1, true) then
        table.insert(order, "marker")
      end
    end
    assert.are.same({ PROMPTS[1], PROMPTS[2], PROMPTS[3], "marker", AFTER }, order, table.concat(lines, "\n"))
    local _, headings = table.concat(lines, "\n"):gsub("## You\n", "")
    assert.are.equal(4, headings) -- the summary is no turn
    -- the numbers beside the turns are the daemon's (what :ElelemRewind N takes): 4 is the last
    local numbers = tui:lua([[
      local out
      require("elelem.daemon").request("session/checkpoints", { sessionId = require("elelem.session").current().id },
        function(_, r) out = r end)
      vim.wait(5000, function() return out ~= nil end)
      return vim.tbl_map(function(t) return t.number end, out.turns)
    ]])
    assert.are.same({ 1, 2, 3, 4 }, numbers)
    local screen = tui:screen()
    assert.matches("## You turn 4%s*\n[^\n]*│%s*\n[^\n]*│    " .. vim.pesc(AFTER), screen)
    -- and on screen: the user scrolls to the top of the chat and reads the first turn
    tui:keys("Escape")
    tui:keys("C-w", "k")
    tui:wait("return vim.b.elelem_chat == true", "the chat")
    tui:keys("g", "g")
    tui:see(PROMPTS[1])
    tui:see("first answer\n")
  end)
end)
