-- Tool results are viewable: <CR> on a tool line of the chat opens a float with the call's
-- arguments and the result the model read (the daemon's event/result payload).
local H = require("spec.helpers")

describe("a tool line's result", function()
  teardown(H.shutdown)

  local select = vim.ui.select

  before_each(function()
    H.setup()
    H.reset()
  end)

  after_each(function()
    vim.ui.select = select
    for _, win in ipairs(vim.api.nvim_list_wins()) do
      if vim.api.nvim_win_get_config(win).relative ~= "" then
        vim.api.nvim_win_close(win, true)
      end
    end
  end)

  --- Puts the cursor of the chat window on the line matching `pattern` and presses <CR>.
  local function open_on(pattern)
    local s = H.session()
    local win = require("elelem.layout").find(s.chat:buffer())
    vim.api.nvim_set_current_win(win)
    local row
    for i, line in ipairs(H.lines()) do
      if line:match(pattern) then
        row = i
      end
    end
    assert(row, "no line matches " .. pattern)
    vim.api.nvim_win_set_cursor(win, { row, 0 })
    vim.api.nvim_feedkeys(vim.keycode("<CR>"), "x", false)
    local current = vim.api.nvim_get_current_win()
    if current == win then
      return nil
    end
    local config = vim.api.nvim_win_get_config(current)
    local buf = vim.api.nvim_win_get_buf(current)
    return {
      win = current,
      chat = win,
      float = config.relative ~= "",
      title = config.title and config.title[1][1],
      text = table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n"),
      filetype = vim.bo[buf].filetype,
    }
  end

  it("shows what read gave the model, fenced in the file's language", function()
    H.turn('!tool read {"path":"README.md"}')
    local shown = assert(open_on("^%+ read%("))
    assert.is_true(shown.float)
    assert.matches("read ✓", shown.title)
    assert.are.equal("markdown", shown.filetype)
    assert.matches("path: README%.md", shown.text)
    assert.matches("\n```+markdown\n# A project\n\nIt has a readme%.\n```+", shown.text)
    -- q closes it and gives the chat back
    vim.api.nvim_feedkeys("q", "x", false)
    assert.are.equal(shown.chat, vim.api.nvim_get_current_win())
    assert.is_false(vim.api.nvim_win_is_valid(shown.win))
  end)

  it("shows an execute's output and exit status, and the whole command", function()
    vim.ui.select = function(_, _, done)
      vim.schedule(function()
        done("allow")
      end)
    end
    local command = "printf 'one\\ntwo\\n'; echo " .. ("long-"):rep(50) .. "end"
    H.turn(('!tool execute {"command":"%s"}'):format(command:gsub("\\", "\\\\")))
    local shown = assert(open_on("^%+ execute%("))
    assert.matches("execute ✓", shown.title)
    assert.matches("exit_status: 0", shown.text)
    assert.matches("\n```text\none\ntwo\nlong%-long%-.-%-end\n```", shown.text)
    assert.is_truthy(shown.text:find(command, 1, true), shown.text) -- the line is cut; the float is not
  end)

  it("shows a failure's error", function()
    H.turn("!tool read {}")
    local shown = assert(open_on("^%+ read%({}%)"))
    assert.matches("read ✗", shown.title)
    assert.matches("error: object at root is missing required properties: path", shown.text)
  end)

  it("keeps each line's own result across turns", function()
    local function read(path) -- the same call id each turn: a provider may reuse its ids
      local call = { type = "doing", id = "call_0", name = "read", arguments = { path = path } }
      return "!events " .. vim.json.encode({ call })
    end
    H.turn(read("README.md"))
    vim.fn.writefile({ "other" }, H.project .. "/other.txt")
    H.turn(read("other.txt"))
    local first = assert(open_on('^%+ read%({"path":"README.md"}%)'))
    assert.matches("It has a readme", first.text)
    vim.api.nvim_win_close(first.win, true)
    local second = assert(open_on('^%+ read%({"path":"other.txt"}%)'))
    assert.matches("\nother\n", second.text)
  end)

  it("leaves <CR> alone on other lines", function()
    H.turn("!echo first line")
    assert.is_nil(open_on("^## You$"))
    assert.are.equal(2, vim.api.nvim_win_get_cursor(0)[1]) -- moved down, as <CR> does
  end)
end)
