-- Checkpoints (issue 17): :ElelemUndo and :ElelemRewind against the real daemon's
-- session/checkpoints and session/rewind, and /undo's confirm question.
local H = require("spec.helpers")

local api = vim.api

describe("undo and rewind", function()
  teardown(H.shutdown)

  local select = vim.ui.select
  local prompts
  local file = H.project .. "/undone.txt"

  --- Answers every vim.ui.select with `choice` (or a function of the items), noting prompts.
  local function answer(choice)
    vim.ui.select = function(items, opts, done)
      table.insert(prompts, { prompt = opts.prompt, kind = opts.kind, items = items, format_item = opts.format_item })
      vim.schedule(function()
        done(type(choice) == "function" and choice(items) or choice)
      end)
    end
  end

  --- A turn that writes `content` to `file` (not open: reviewed, accepted, the daemon writes it).
  local function agent_writes(content)
    vim.cmd("Elelem !tool write " .. vim.json.encode({ path = file, content = content }))
    H.wait(function()
      return #require("elelem.review").open > 0
    end, "the review")
    require("elelem").accept()
    H.idle()
  end

  before_each(function()
    H.setup()
    H.reset()
    prompts = {}
    vim.cmd("silent! only")
    pcall(vim.cmd.bwipeout, { file, bang = true })
    vim.fn.writefile({ "before the agent" }, file)
  end)

  after_each(function()
    vim.ui.select = select
  end)

  it(":ElelemUndo restores the files, reloads the open buffer and redraws the chat", function()
    H.turn("!echo a first turn")
    agent_writes("the agent's text\n")
    assert.are.same({ "the agent's text" }, vim.fn.readfile(file))
    vim.cmd.edit(vim.fn.fnameescape(file))
    local buf = api.nvim_get_current_buf()
    assert.are.same({ "the agent's text" }, api.nvim_buf_get_lines(buf, 0, -1, false))
    answer("yes")
    vim.cmd("ElelemUndo")
    H.wait(function()
      return H.text():find("rewound to before turn", 1, true) ~= nil
    end, "the rewind")
    assert.are.same({ "before the agent" }, vim.fn.readfile(file))
    assert.are.same({ "before the agent" }, api.nvim_buf_get_lines(buf, 0, -1, false))
    assert.are.equal(1, #prompts)
    assert.matches("^Rewind to before turn 2:\nrestores: undone%.txt\n", prompts[1].prompt)
    assert.matches("drops turns: 2\nGo on%?$", prompts[1].prompt)
    -- the chat is the conversation as it now is: the first turn, not the second
    assert.matches("a first turn", H.text())
    assert.is_nil(H.text():find("!tool write", 1, true))
  end)

  it("names an unsaved buffer of an affected file before touching it, and no leaves all", function()
    agent_writes("agent\n")
    vim.cmd.edit(vim.fn.fnameescape(file))
    local buf = api.nvim_get_current_buf()
    api.nvim_buf_set_lines(buf, 0, -1, false, { "my unsaved words" })
    answer("no")
    vim.cmd("ElelemUndo")
    H.wait(function()
      return #prompts > 0
    end, "the confirmation")
    assert.matches("unsaved changes kept %(merged into the restored text%): undone%.txt", prompts[1].prompt)
    vim.wait(300)
    assert.are.same({ "my unsaved words" }, api.nvim_buf_get_lines(buf, 0, -1, false))
    assert.are.same({ "agent" }, vim.fn.readfile(file))
  end)

  it(":ElelemRewind picks the turn from session/checkpoints", function()
    H.turn("!echo one")
    agent_writes("two\n")
    answer(function(items)
      if type(items[1]) == "table" then
        return items[1] -- the oldest first: turn 1
      end
      return "yes"
    end)
    vim.cmd("ElelemRewind")
    H.wait(function()
      return H.text():find("rewound to before turn 1", 1, true) ~= nil
    end, "the rewind")
    assert.are.equal("elelem.rewind", prompts[1].kind)
    local items = prompts[1].items
    assert.matches("^turn 2  .-  !tool write", prompts[1].format_item(items[#items]))
    assert.are.same({ "before the agent" }, vim.fn.readfile(file))
  end)

  it("says why for a turn number the conversation does not hold, or not a number", function()
    H.turn("!echo one")
    vim.cmd("ElelemRewind 42")
    H.wait(function()
      return #H.notified("no turn 42 in this conversation (turns 1 to 1)") > 0
    end, "the error")
    for _, bad in ipairs({ "abc", "1.5", "0", "-3", "1e999", ("9"):rep(400) }) do
      vim.cmd("ElelemRewind " .. bad)
      H.wait(function()
        return #H.notified("not a turn number: " .. bad:sub(1, 40)) > 0
      end, "the error for " .. bad)
    end
  end)

  it("/undo asks its confirm question through vim.ui.select, then reloads and redraws", function()
    H.turn("!echo the first")
    agent_writes("by the agent\n")
    vim.cmd.edit(vim.fn.fnameescape(file))
    local buf = api.nvim_get_current_buf()
    api.nvim_buf_set_lines(buf, 0, -1, false, { "unsaved here" })
    answer(function(items) -- yes, then: the user's edit clashes with the undone line
      return items[1] == "yes" and "yes" or "take the restored lines"
    end)
    H.turn("/undo")
    assert.are.equal("elelem.confirm", prompts[1].kind)
    assert.are.same({ "yes", "no" }, prompts[1].items)
    assert.matches("^Rewind to before turn 2%?\n  files restored: undone%.txt\n", prompts[1].prompt)
    assert.matches("unsaved changes kept %(merged into the restored text%): undone%.txt", prompts[1].prompt)
    assert.are.same({ "before the agent" }, vim.fn.readfile(file))
    H.wait(function()
      return H.text():find("## /undo", 1, true) == nil and H.text():find("the first", 1, true) ~= nil
        and H.text():find("```text", 1, true) ~= nil
    end, "the redrawn chat")
    assert.is_nil(H.text():find("!tool write", 1, true))
    H.wait(function()
      return #prompts == 2
    end, "the clash question")
    assert.are.equal("elelem.merge", prompts[2].kind)
    assert.matches("undone%.txt: your unsaved edits and the undone change both touch line 1", prompts[2].prompt)
    assert.are.same({ "before the agent" }, api.nvim_buf_get_lines(buf, 0, -1, false))
  end)

  it("/undo answered no changes nothing", function()
    agent_writes("by the agent\n")
    answer("no")
    H.turn("/undo")
    assert.are.same({ "by the agent" }, vim.fn.readfile(file))
    assert.matches("!tool write", H.text())
  end)

  it("without checkpoints offers the conversation alone", function()
    H.shutdown()
    H.setup({ env = vim.tbl_extend("force", H.options.env, { ELELEM_CHECKPOINTS = "0" }) })
    H.reset()
    H.turn("!echo kept")
    agent_writes("stays\n")
    answer("yes")
    vim.cmd("ElelemUndo")
    H.wait(function()
      return H.text():find("rewound to before turn 2", 1, true) ~= nil
    end, "the rewind")
    assert.matches("^the files of turn 2 cannot be rewound: checkpoints are off %(ELELEM_CHECKPOINTS=0%)\nRewind the conversation only%?$",
      prompts[1].prompt)
    assert.matches("%(conversation only%)", prompts[2].prompt)
    assert.are.same({ "stays" }, vim.fn.readfile(file)) -- files: false
    assert.is_nil(H.text():find("!tool write", 1, true))
    H.shutdown()
  end)

  it("explains every rewind error by its kind", function()
    local explain = require("elelem.rewind").explain
    local function err(kind, data)
      return { code = -32000, message = "raw " .. kind, data = vim.tbl_extend("force", { kind = kind }, data or {}) }
    end
    assert.matches("while a turn runs", explain(err("session_busy"), 3))
    assert.matches("turn 3 is no longer in the conversation", explain(err("unknown_turn", { turnId = 3 }), 3))
    assert.matches("its checkpoint was pruned", explain(err("no_checkpoint", { reason = "pruned" }), 3))
    assert.matches("its checkpoint names another turn", explain(err("no_checkpoint", { reason = "tampered" }), 3))
    assert.matches("changed outside the agent since turn 3: a%.txt",
      explain(err("outside_changes", { files = { outside = { "a.txt" } } }), 3))
    assert.matches("the restore failed %(timeout%); nothing was changed",
      explain(err("checkpoint_failed", { reason = "timeout" }), 3))
  end)
end)
