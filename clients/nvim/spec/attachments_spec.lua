-- The editor's context (issue 21): #buffer, #selection, #diagnostics, @path and :ElelemAdd
-- become what the model reads (checked with session/context on the real daemon), and
-- editor/state reaches the turn's prompt as a note (never the system prompt: its prefix stays
-- byte-stable for the provider's prompt cache, docs/context.md).
local H = require("spec.helpers")

local api = vim.api

describe("the editor's context", function()
  teardown(H.shutdown)

  local file = H.project .. "/calc.lua"

  --- The messages the model sees next (session/context).
  local function messages()
    local got
    require("elelem.daemon").request("session/context", { sessionId = H.session().id }, function(err, result)
      got = err and { error = err } or result.messages
    end)
    H.wait(function()
      return got ~= nil
    end, "session/context")
    return got
  end

  --- The last user message the model received.
  local function sent()
    local list = messages()
    for i = #list, 1, -1 do
      if list[i].role == "user" then
        return list[i].content
      end
    end
  end

  local function open_file()
    vim.cmd("silent! only")
    pcall(vim.cmd.bwipeout, { file, bang = true })
    vim.fn.writefile({ "local M = {}", "function M.add(a, b)", "  return a + b", "end", "return M" }, file)
    vim.cmd.edit(vim.fn.fnameescape(file))
    return api.nvim_get_current_buf()
  end

  before_each(function()
    H.setup()
    H.reset()
    api.nvim_buf_set_lines(H.session():input(), 0, -1, false, {})
  end)

  it("#buffer attaches the buffer with its unsaved changes", function()
    local buf = open_file()
    api.nvim_buf_set_lines(buf, 0, 1, false, { "local M = { unsaved = true }" })
    H.turn("!echo explain #buffer")
    assert.are.equal('!echo explain\n\n<attachment type="file" path="calc.lua">\nlocal M = { unsaved = true }\n'
      .. "function M.add(a, b)\n  return a + b\nend\nreturn M\n</attachment>", sent())
    assert.matches("\nattached: file calc%.lua\n", H.text())
    assert.matches("## You\n\n    !echo explain #buffer\n", H.text()) -- the chat shows what was typed
  end)

  it("#selection attaches the last visual selection with its LSP range", function()
    open_file()
    vim.cmd("normal! 2GVj\27") -- lines 2-3, linewise
    H.turn("!echo what is #selection")
    assert.are.equal('!echo what is\n\n<attachment type="selection" path="calc.lua" lines="2-3">\n'
      .. "function M.add(a, b)\n  return a + b\n</attachment>", sent())
  end)

  it("#selection of a characterwise selection sends its text and UTF-16 range", function()
    local buf = open_file()
    api.nvim_buf_set_lines(buf, 0, 1, false, { "local é = 'café au lait'" })
    vim.cmd("normal! 1G0f'lvee\27") -- "café au"
    local a = require("elelem.context").selection(buf)
    assert.are.equal("café au", a.text)
    assert.are.same({ start = { line = 0, character = 11 }, ["end"] = { line = 0, character = 18 } }, a.range)
    H.turn("!echo about #selection")
    assert.matches('<attachment type="selection" path="calc.lua" lines="1%-1">\ncafé au\n</attachment>$', sent())
  end)

  it("#selection without any selection keeps the prompt and says why", function()
    local buf = open_file()
    api.nvim_buf_del_mark(buf, "<")
    api.nvim_buf_del_mark(buf, ">")
    vim.cmd("Elelem look at #selection")
    assert.is_false(H.session().busy)
    assert.are.equal(1, #H.notified("#selection: no visual selection"))
    assert.are.same({ "look at #selection" }, api.nvim_buf_get_lines(H.session():input(), 0, -1, false))
  end)

  it("#diagnostics attaches the buffer's problems with severity strings", function()
    local buf = open_file()
    local ns = api.nvim_create_namespace("spec.diagnostics")
    vim.diagnostic.set(ns, buf, {
      { lnum = 2, col = 9, end_lnum = 2, end_col = 14, severity = vim.diagnostic.severity.WARN,
        message = "suspicious sum", source = "speclint" },
      { lnum = 0, col = 0, severity = vim.diagnostic.severity.ERROR, message = "bad start" },
    })
    local attachment = require("elelem.context").diagnostics(buf)
    assert.are.same({ start = { line = 2, character = 9 }, ["end"] = { line = 2, character = 14 } },
      attachment.items[2].range.start.line == 2 and attachment.items[2].range or attachment.items[1].range)
    H.turn("!echo fix #diagnostics")
    local content = sent()
    assert.matches('<attachment type="diagnostics" path="calc.lua">', content)
    assert.matches("calc%.lua:3:10: warning: suspicious sum %(speclint%)", content)
    assert.matches("calc%.lua:1:1: error: bad start", content)
    vim.diagnostic.reset(ns, buf)
  end)

  it("@path completes through session/complete and attaches the file", function()
    open_file()
    local input = require("elelem.input")
    local start, items
    input.arguments(nil, "see @cal", function(s, i)
      start, items = s, i
    end)
    H.wait(function()
      return items ~= nil
    end, "the completion")
    assert.are.equal(5, start)
    assert.is_true(vim.tbl_contains(items, "@calc.lua"), vim.inspect(items))
    H.turn("!echo see @calc.lua")
    assert.matches('^!echo see @calc%.lua\n\n<attachment type="file" path="calc%.lua">\nlocal M = {}\n', sent())
  end)

  it(":ElelemAdd keeps the file as a pending attachment shown in the prompt's winbar", function()
    open_file()
    vim.cmd("2,3ElelemAdd")
    local s = H.session()
    assert.are.same({ "selection calc.lua:2-3" }, s:pending_labels())
    s:show()
    local bar = vim.wo[vim.fn.bufwinid(s:input())].winbar
    assert.matches("attached:%%%* selection calc%.lua:2%-3", bar)
    H.turn("!echo and this")
    assert.matches('<attachment type="selection" path="calc.lua" lines="2%-3">\nfunction M.add', sent())
    assert.are.same({}, s:pending_labels()) -- sent once
  end)

  it("an attachment the daemon refuses keeps the prompt and the attachment, and says why", function()
    open_file()
    local binary = H.project .. "/blob.bin"
    local fd = assert(io.open(binary, "wb"))
    fd:write("\0\1\2binary")
    fd:close()
    vim.cmd("ElelemAdd")
    local s = H.session()
    s:attach({ { type = "file", path = binary } })
    H.turn("!echo read them")
    assert.matches("error: .*blob%.bin is a binary file", H.text())
    assert.are.same({ "!echo read them" }, api.nvim_buf_get_lines(s:input(), 0, -1, false))
    assert.are.same({ "file calc.lua", "file blob.bin" }, s:pending_labels())
  end)

  it("editor/state is sent only when setup asks for it", function()
    open_file()
    H.turn("!echo hi")
    require("elelem.context").send_state()
    H.turn("!echo again")
    for _, message in ipairs(messages()) do
      assert.is_nil(tostring(message.content):find("open file:", 1, true))
    end
  end)

  it("editor/state tells the model which file and lines the user is looking at", function()
    H.setup({ editor_state = true })
    open_file()
    H.turn("!echo hi")
    local system = messages()[1].content
    vim.cmd("wincmd p")
    vim.cmd.edit(vim.fn.fnameescape(file))
    local editor = api.nvim_get_current_win()
    api.nvim_win_set_cursor(editor, { 3, 2 })
    require("elelem.context").send_state()
    H.turn("!echo where am I")
    local note = sent()
    assert.matches("^<context%-note>\n.*\n%- open file: calc%.lua\n", note)
    assert.matches("visible lines: 1%-5", note)
    assert.matches("</context%-note>\n\n!echo where am I$", note)
    -- and after a pause, by itself: moving into visual mode selects lines 2-4
    local daemon = require("elelem.daemon")
    local notify, states = daemon.notify, {}
    daemon.notify = function(method, params)
      if method == "editor/state" then
        table.insert(states, params)
      end
      return notify(method, params)
    end
    api.nvim_set_current_win(editor) -- the turn left the user in the chat
    vim.cmd("normal! 2GVjj")
    vim.cmd("doautocmd CursorHold")
    local ok, err = pcall(H.wait, function()
      return #states > 0
    end, "the debounced editor/state", 10000)
    daemon.notify = notify
    assert(ok, err)
    vim.cmd("normal! \27")
    H.turn("!echo and now") -- sent before the debounced state of normal mode
    assert.matches("selected: lines 2%-4", sent())
    -- never in the system prompt, which does not move
    assert.are.equal(system, messages()[1].content)
    assert.is_nil(system:find("open file:", 1, true))
  end)

  it("fs/read_text_file serves a buffer, and -32002 when there is none", function()
    local buf = open_file()
    api.nvim_buf_set_lines(buf, 0, 1, false, { "-- unsaved" })
    local files = require("elelem.files")
    assert.are.same({ content = "-- unsaved\nfunction M.add(a, b)\n  return a + b\nend\nreturn M\n" },
      files.read_text_file({ path = file }))
    local result, err = files.read_text_file({ path = H.project .. "/nothing.txt" })
    assert.is_nil(result)
    assert.are.equal(-32002, err.code)
  end)

  it("fs/write_text_file lands in a loaded buffer as one undo step, else on disk", function()
    local buf = open_file()
    local files = require("elelem.files")
    assert.are.equal(vim.NIL, files.write_text_file({ path = file, content = "-- new\nreturn {}\n" }))
    assert.are.same({ "-- new", "return {}" }, api.nvim_buf_get_lines(buf, 0, -1, false))
    assert.are.same({ "-- new", "return {}" }, vim.fn.readfile(file)) -- it was clean: written
    vim.cmd("silent normal! u")
    assert.are.same("local M = {}", api.nvim_buf_get_lines(buf, 0, 1, false)[1])
    local other = H.project .. "/written.txt"
    os.remove(other)
    assert.are.equal(vim.NIL, files.write_text_file({ path = other, content = "on disk\n" }))
    assert.are.same({ "on disk" }, vim.fn.readfile(other))
  end)
end)
