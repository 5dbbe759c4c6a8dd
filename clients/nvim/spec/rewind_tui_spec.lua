-- Rewind as the user counts turns (issues 29 and 31): `:ElelemRewind N` and the picker
-- take the number the user sees (1, 2, 3; a slash command in between takes no number),
-- the confirmation says what the plan says (the turn that created each deleted file, what
-- is left as it is and why, the user's files that would be lost), and the rewind sends
-- exactly those files as `confirm`, never `force`: a file of the user's that changes while
-- the question is open is asked about again. Driven through a real terminal (spec/tui.lua).
local H = require("spec.helpers")
local T = require("spec.tui")

-- every session/rewind request the editor sends, as sent (an observer: the request goes on)
local SPY = table.concat({
  "_G.rewinds = {}",
  "local daemon = require('elelem.daemon')",
  "local request = daemon.request",
  "daemon.request = function(method, params, cb)",
  "  if method == 'session/rewind' then table.insert(_G.rewinds, vim.deepcopy(params)) end",
  "  return request(method, params, cb)",
  "end",
}, " ") -- one line: spec/tui.lua writes `init` as one line of the editor's init file

local function read(path)
  local fd = io.open(path, "rb")
  if not fd then
    return nil
  end
  local text = fd:read("*a")
  fd:close()
  return text
end

describe("rewind under real hands", function()
  local tui
  local notes = H.project .. "/notes.txt"
  local made = H.project .. "/made.txt"
  local data = H.project .. "/data.csv"
  local BIG = "id,value\n" .. ("1,22222222\n"):rep(2000) -- over the 4K limit: no checkpoint holds it

  local SETTLED = "local s = require('elelem.session').current() return not s.busy and #s.turns == %d"
  local COMMANDS = [[local s = require('elelem.session').current()
    local _, n = table.concat(s.chat:text(), "\n"):gsub("## /context", "")
    return not s.busy and n == %d]]

  --- Turn `n`: the agent writes `path`, the user accepts the review from the command line.
  local function agent_writes(n, path, content)
    tui:command("Elelem !tool write " .. vim.json.encode({ path = path, content = content }))
    tui:wait("return #require('elelem.review').open == 1", "the review of " .. path)
    tui:command("ElelemAccept")
    tui:wait(SETTLED:format(n), "the turn writing " .. path)
  end

  --- Turns #1..#4 with slash commands between them, so the ids are 1, 3, 5, 6.
  local function four_turns()
    tui:command("Elelem !echo first")
    tui:wait(SETTLED:format(1), "turn 1")
    tui:command("Elelem /context")
    tui:wait(COMMANDS:format(1), "/context")
    agent_writes(2, "notes.txt", "the agent's notes\n")
    tui:command("Elelem /context")
    tui:wait(COMMANDS:format(2), "/context")
    agent_writes(3, "made.txt", "made by the agent\n")
    agent_writes(4, "data.csv", "one line\n")
    local listed = tui:lua([[
      local out
      require("elelem.daemon").request("session/checkpoints", { sessionId = require("elelem.session").current().id },
        function(_, r) out = r end)
      vim.wait(5000, function() return out ~= nil end)
      return vim.tbl_map(function(t) return { t.turnId, t.number } end, out.turns)
    ]])
    assert.are.same({ { 1, 1 }, { 3, 2 }, { 5, 3 }, { 6, 4 } }, listed) -- the ids are not the numbers
  end

  before_each(function()
    vim.fn.writefile({ "the user's notes" }, notes)
    vim.fn.delete(made)
    local fd = assert(io.open(data, "wb"))
    fd:write(BIG)
    fd:close()
  end)

  after_each(function()
    if tui then
      tui:stop()
      tui = nil
    end
  end)

  it(":ElelemRewind 2 rewinds the turn the user numbers 2, says the plan, confirms exactly the lost files", function()
    tui = T.start({ file = "README.md", init = SPY, setup = { env = { ELELEM_CHECKPOINTS_MAX_FILE = "4K" } } })
    four_turns()
    vim.fn.writefile({ "the user's own words" }, notes) -- the user's edit, on disk, after turn 2
    tui:command("ElelemRewind 2")
    tui:see("Go on?")
    local screen = tui:screen()
    assert.matches("Rewind to before turn 2:", screen, 1, true)
    assert.matches("deletes, created by turn 3: made.txt", screen, 1, true)
    assert.matches("left as they are (no checkpoint holds them), over the size limit when turn 2 began: data.csv",
      screen, 1, true)
    assert.matches("YOU LOSE your edits to (changed outside the agent since): notes.txt", screen, 1, true)
    assert.matches("drops turns: 2, 3, 4", screen, 1, true)
    tui:type("1")
    tui:keys("Enter")
    tui:wait([[return table.concat(require('elelem.session').current().chat:text(), "\n")
      :find("rewound to before turn 2", 1, true) ~= nil]], "the rewind said in the chat")
    assert.are.equal("the user's notes\n", read(notes)) -- as before turn 2: the user agreed to lose the edit
    assert.is_nil(read(made))
    assert.are.equal("one line\n", read(data)) -- no checkpoint held it: left as it is
    local sent = tui:lua("return _G.rewinds")
    assert.are.equal(2, #sent)
    assert.is_true(sent[1].dryRun)
    assert.are.equal(3, sent[2].turnId)
    assert.are.same({ "notes.txt" }, sent[2].confirm)
    assert.is_nil(sent[2].force)
    local chat = table.concat(tui:lua("return require('elelem.session').current().chat:text()"), "\n")
    assert.matches("first", chat, 1, true)
    assert.is_nil(chat:find('"path":"made.txt"', 1, true)) -- turns 2 to 4 are gone from the chat
    assert.matches("(rewound to before turn 2: ", chat, 1, true)
  end)

  it("the picker lists the turns by number; a file of the user's changed under the question is asked again", function()
    tui = T.start({ file = "README.md", init = SPY, setup = { env = { ELELEM_CHECKPOINTS_MAX_FILE = "4K" } } })
    four_turns()
    tui:command("ElelemRewind")
    tui:see("Rewind to before turn")
    local screen = tui:screen()
    -- oldest first, so the number typed is the turn seen (the ids would be 1, 3, 5, 6)
    assert.matches("1: turn 1  [^\n]*!echo first", screen)
    assert.matches("2: turn 2  [^\n]*notes%.txt", screen)
    assert.matches("3: turn 3  [^\n]*made%.txt", screen)
    assert.matches("4: turn 4  [^\n]*!tool write[^\n]*data%.csv", screen)
    tui:type("2") -- turn 2
    tui:keys("Enter")
    tui:see("Go on?")
    assert.is_nil(tui:screen():find("YOU LOSE", 1, true)) -- nothing of the user's yet
    vim.fn.writefile({ "typed while the question was open" }, notes)
    tui:type("1")
    tui:keys("Enter")
    -- the daemon refuses (the user did not agree to lose notes.txt): the new plan, asked again
    tui:see("this is the plan now")
    tui:see("YOU LOSE your edits to (changed outside the agent since): notes.txt")
    assert.are.equal("typed while the question was open\n", read(notes))
    tui:shot(H.root .. "/screenshot-rewind.png")
    tui:type("2") -- no
    tui:keys("Enter")
    vim.wait(500)
    assert.are.equal("typed while the question was open\n", read(notes))
    assert.are.equal("made by the agent\n", read(made))
    local sent = tui:lua("return _G.rewinds")
    assert.are.equal(3, #sent) -- dry run, the refused rewind, the dry run again; none after "no"
    assert.is_nil(sent[2].confirm) -- nothing of the user's in the first plan
    assert.is_nil(sent[2].force)
    assert.is_true(sent[3].dryRun)
    assert.are.equal(3, sent[3].turnId)
  end)
end)
