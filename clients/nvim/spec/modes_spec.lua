-- Modes and the plan (issue 20) against the real daemon: the mode in the winbar and in
-- require("elelem").statusline(), :ElelemMode through session/setMode, /mode's event/mode,
-- the todo tool's event/plan as a block updated in place, the stored plan redrawn on load.
-- (A sub-agent's nested events: plan_spec.lua by hand, task_spec.lua from a real task call.)
local H = require("spec.helpers")

describe("modes and the plan", function()
  teardown(H.shutdown)

  local select = vim.ui.select

  before_each(function()
    H.setup()
    H.reset()
  end)

  after_each(function()
    vim.ui.select = select
  end)

  local function winbar()
    local win = vim.fn.win_findbuf(H.session().chat:buffer())[1]
    return win and vim.wo[win].winbar or ""
  end

  it("shows the mode in the winbar and the statusline component, and :ElelemMode switches it", function()
    H.turn("!echo hi")
    assert.are.equal("elelem:build", require("elelem").statusline())
    assert.matches("mode: build", winbar())
    vim.cmd("ElelemMode plan")
    H.wait(function()
      return require("elelem").statusline() == "elelem:plan"
    end, "the plan mode")
    assert.matches("mode: plan", winbar())
    assert.matches("%(mode: plan%)", H.text())
    -- in plan mode a write is refused with a clear result
    H.turn('!tool write {"path":"planned.txt","content":"x"}')
    assert.matches("%+ write%(.-%) ✗", H.text())
    assert.are.equal(0, vim.fn.filereadable(H.project .. "/planned.txt"))
    -- the picker lists the session's modes
    local offered
    vim.ui.select = function(items, opts, done)
      offered = vim.tbl_map(opts.format_item, items)
      vim.schedule(function()
        done(items[1])
      end)
    end
    vim.cmd("ElelemMode")
    H.wait(function()
      return require("elelem").statusline() == "elelem:build"
    end, "the picked mode")
    assert.matches("^Build — ", offered[1])
    assert.is_truthy(vim.tbl_contains(require("elelem").mode_names(), "verify"))
  end)

  it("says which modes exist for an unknown one", function()
    H.turn("!echo hi")
    vim.cmd("ElelemMode nosuch")
    H.wait(function()
      return #H.notified("(modes: build") > 0
    end, "the error")
    assert.are.equal("elelem:build", require("elelem").statusline())
  end)

  it("/mode typed in the chat changes the statusline too (event/mode)", function()
    H.turn("/mode review")
    H.wait(function()
      return require("elelem").statusline() == "elelem:review"
    end, "event/mode")
  end)

  it("draws event/plan as a checklist block, updated in place, and redraws it on load", function()
    local first = { todos = { { content = "read the code", status = "in_progress" },
      { content = "write the fix", status = "pending" } } }
    local second = { todos = { { content = "read the code", status = "completed" },
      { content = "write the fix", status = "in_progress" } } }
    H.turn("!tools " .. vim.json.encode({ { "todo", first }, { "todo", second } }))
    local text = H.text()
    local _, blocks = text:gsub("\nPlan:\n", "")
    assert.are.equal(1, blocks)
    assert.matches("\nPlan:\n  %[x%] read the code\n  %[~%] write the fix\n", text)
    local old = H.session().id
    vim.cmd("ElelemNew")
    vim.cmd("ElelemResume")
    H.wait(function()
      return H.session().id == old
    end, "the session to load")
    assert.matches("\nPlan:\n  %[x%] read the code\n  %[~%] write the fix", H.text())
    vim.cmd("tabonly")
  end)
end)
