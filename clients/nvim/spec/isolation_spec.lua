-- The suite never touches the user's own folders: Neovim and the daemon it spawns run with
-- the suite's HOME and XDG folders (test.sh makes them; it also fails when the real ones
-- change during the run), and nothing from the caller's environment redirects them.
local H = require("spec.helpers")

describe("the suite's own folders", function()
  teardown(H.shutdown)

  local select = vim.ui.select

  before_each(function()
    H.setup()
    H.reset()
  end)

  after_each(function()
    vim.ui.select = select
  end)

  local function inside(path)
    return vim.startswith(vim.fs.normalize(path), vim.fs.normalize(H.tmp) .. "/")
  end

  it("are Neovim's", function()
    for _, name in ipairs({ "HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME" }) do
      assert.is_true(inside(assert(vim.env[name], name)), name .. "=" .. tostring(vim.env[name]))
    end
    for _, what in ipairs({ "config", "data", "state", "cache", "log" }) do
      assert.is_true(inside(vim.fn.stdpath(what)), what)
    end
    assert.is_nil(vim.env.ELELEM_STATE_DIR) -- it would move the daemon's stored sessions
  end)

  it("are the daemon's: its stored session lands in the suite's state folder", function()
    H.turn("!echo stored where?")
    local id = H.session().id
    local sessions = H.tmp .. "/state/elelem/sessions"
    H.wait(function()
      return #vim.fn.glob(sessions .. "/*" .. id .. "*", false, true) > 0
    end, "the session file in " .. sessions)
  end)

  it("are the environment of what the daemon runs", function()
    vim.ui.select = function(_, _, done)
      vim.schedule(function()
        done("allow")
      end)
    end
    local seen, stop = H.record()
    H.turn('!tool execute {"command":"echo $HOME $XDG_CONFIG_HOME $XDG_DATA_HOME $XDG_STATE_HOME $XDG_CACHE_HOME"}')
    stop()
    local output
    for _, event in ipairs(seen) do
      if event.method == "event/result" then
        output = vim.trim(event.params.result.content)
      end
    end
    local dirs = vim.split(assert(output, "no execute result"), " ", { plain = true })
    assert.are.equal(5, #dirs, output)
    for _, dir in ipairs(dirs) do
      assert.is_true(inside(dir), dir)
    end
  end)
end)
