-- The agent works through the editor (issue 16, protocol.md "Files"): reads see unsaved
-- buffers, changes land in the buffer as one undo step after a hunk-by-hunk review.
local H = require("spec.helpers")

local api = vim.api

describe("files through the editor", function()
  teardown(H.shutdown)

  local file = H.project .. "/notes.txt"
  local twenty = {}
  for i = 1, 20 do
    twenty[i] = "line " .. i
  end

  --- Opens `file` with `lines` on disk and in the buffer.
  local function open(lines)
    vim.cmd("silent! only")
    pcall(vim.cmd.bwipeout, { file, bang = true })
    vim.fn.writefile(lines, file)
    vim.cmd.edit(vim.fn.fnameescape(file))
    return api.nvim_get_current_buf()
  end

  local function buffer_lines(buf)
    return api.nvim_buf_get_lines(buf, 0, -1, false)
  end

  --- Sends `prompt` and waits for the review split to open.
  local function reviewing(prompt)
    vim.cmd("Elelem " .. prompt)
    H.wait(function()
      return #require("elelem.review").open > 0 or not H.session().busy
    end, "the review to open")
    assert(#require("elelem.review").open > 0, "the turn ended with no review:\n" .. H.text())
    local r = require("elelem.review").open[1]
    require("elelem.review").enter() -- the user's deliberate step (:ElelemReview)
    return r
  end

  local seen, stop

  --- What the model read from the last tool call (its `event/result`), as JSON.
  local function last_result()
    for i = #seen, 1, -1 do
      if seen[i].method == "event/result" then
        return vim.json.encode(seen[i].params.result)
      end
    end
    return "(no event/result)"
  end

  before_each(function()
    H.setup()
    H.reset()
    seen, stop = H.record()
  end)

  after_each(function()
    stop()
  end)

  it("declares files, fs, input and editorState in initialize", function()
    local caps = require("elelem.daemon").capabilities()
    assert.are.same({ read = true, apply = true, review = true }, caps.files)
    assert.are.same({ readTextFile = true, writeTextFile = true }, caps.fs)
    assert.is_true(caps.input.ask)
    assert.is_true(caps.editorState)
  end)

  it("refuses a malformed proposal with a clear error and changes nothing", function()
    local buf = open(twenty)
    local files = require("elelem.files")
    local good = { id = 1, oldStart = 1, oldLines = 1, newStart = 1, newLines = 1, diff = "@@ -1 +1 @@\n-line 1\n+x\n" }
    local function with(over)
      return vim.tbl_extend("force", { sessionId = "s", toolCallId = "t", path = file, review = false,
        oldText = table.concat(twenty, "\n") .. "\n", newText = "x\n", hunks = { good } }, over)
    end
    local cases = {
      { with({ path = 42 }), "path must be an absolute path" },
      { with({ path = "relative.txt" }), "path must be an absolute path" },
      { with({ newText = { "no" } }), "newText must be a string" },
      { with({ oldText = 7 }), "oldText must be a string or null" },
      { with({ hunks = {} }), "hunks must be a non%-empty list" },
      { with({ hunks = { a = good } }), "hunks must be a non%-empty list" },
      { with({ hunks = { "nope" } }), "hunks%[0%] must be an object" },
      { with({ hunks = { vim.tbl_extend("force", good, { oldStart = -1 }) } }), "hunks%[0%]%.oldStart must be a whole number" },
      { with({ hunks = { vim.tbl_extend("force", good, { newLines = 1.5 }) } }), "hunks%[0%]%.newLines must be a whole number" },
      { with({ hunks = { good, good } }), "hunks%[1%]%.id 1 is repeated" },
      { with({ hunks = { vim.tbl_extend("force", good, { diff = false }) } }), "hunks%[0%]%.diff must be a string" },
      { "not an object", "params must be an object" },
    }
    for _, case in ipairs(cases) do
      local result, err = files.propose(case[1], nil)
      assert.is_nil(result)
      assert.are.equal(-32602, err.code)
      assert.matches("^files/propose: " .. case[2], err.message)
    end
    assert.are.same(twenty, buffer_lines(buf))
    assert.are.same(0, #require("elelem.review").open)
    -- fs/write_text_file wants an absolute path and a string
    local _, err = files.write_text_file({ path = "rel.txt", content = "x" })
    assert.are.equal(-32602, err.code)
    _, err = files.write_text_file({ path = file, content = 3 })
    assert.are.equal(-32602, err.code)
    assert.are.same(twenty, vim.fn.readfile(file))
  end)

  it("read sees the buffer's unsaved changes", function()
    local buf = open({ "on disk" })
    api.nvim_buf_set_lines(buf, 0, -1, false, { "typed, not saved" })
    H.turn(('!tool read {"path":"%s"}'):format(file))
    assert.matches("typed, not saved", last_result())
    assert.are.same({ "on disk" }, vim.fn.readfile(file))
  end)

  it("an accepted edit lands in the buffer and u undoes it in one step", function()
    local buf = open(twenty)
    local r = reviewing(('!tool edit {"path":"%s","old":"line 2\\n","new":"LINE TWO\\nand more\\n"}'):format(file))
    assert.are.same(1, #r.params.hunks)
    assert.are.equal(H.session():input(), api.nvim_win_get_buf(r.back)) -- opened from the prompt area
    vim.cmd("normal ga")
    H.idle()
    assert.are.equal(r.back, api.nvim_get_current_win()) -- and back there once decided
    assert.are.same("LINE TWO", buffer_lines(buf)[2])
    assert.are.same("and more", buffer_lines(buf)[3])
    assert.is_false(vim.bo[buf].modified) -- it had no unsaved changes: written (review.save)
    assert.are.same(buffer_lines(buf), vim.fn.readfile(file))
    assert.matches("accepted by the user", last_result())
    assert.matches("review of notes%.txt → accepted", H.text())
    vim.cmd("silent! only")
    api.nvim_set_current_buf(buf)
    vim.cmd("silent normal! u")
    assert.are.same(twenty, buffer_lines(buf))
  end)

  it("an accepted edit is on the disk before the agent's next tool call reads it (issue 31)", function()
    open(twenty)
    local script = vim.json.encode({
      { "edit", { path = file, old = "line 4\n", new = "line four here\n" } },
      { "grep", { pattern = "four h", path = file } },
    })
    reviewing("!tools " .. script)
    vim.cmd("normal ga")
    H.idle()
    assert.matches("line four here", last_result()) -- the grep after it, in the same turn
  end)

  it("leaves a buffer with the user's unsaved changes unsaved, and with review.save off any", function()
    local buf = open(twenty)
    api.nvim_buf_set_lines(buf, 0, 1, false, { "mine, unsaved" })
    reviewing(('!tool edit {"path":"%s","old":"line 8","new":"line eight"}'):format(file))
    vim.cmd("normal gA")
    H.idle()
    assert.are.same("line eight", buffer_lines(buf)[8])
    assert.is_true(vim.bo[buf].modified)
    assert.are.same(twenty, vim.fn.readfile(file)) -- nothing of the user's written behind them
    H.setup({ review = { save = false } })
    buf = open(twenty)
    reviewing(('!tool edit {"path":"%s","old":"line 9","new":"line nine"}'):format(file))
    vim.cmd("normal gA")
    H.idle()
    assert.are.same("line nine", buffer_lines(buf)[9])
    assert.is_true(vim.bo[buf].modified)
    assert.are.same(twenty, vim.fn.readfile(file))
  end)

  it("the agent's change is its own undo step, apart from the user's edit just before it", function()
    local buf = open(twenty)
    api.nvim_buf_set_lines(buf, 0, 1, false, { "the user's line" }) -- through the API, no key between
    local text = require("elelem.buffers").text(buf):gsub("line 12\n", "line twelve\n")
    require("elelem.buffers").set(buf, text)
    assert.are.same("line twelve", buffer_lines(buf)[12])
    vim.cmd("silent normal! u")
    local expected = vim.deepcopy(twenty)
    expected[1] = "the user's line"
    assert.are.same(expected, buffer_lines(buf))
  end)

  it("keeps CRLF line ends and a missing last newline", function()
    vim.cmd("silent! only")
    pcall(vim.cmd.bwipeout, { file, bang = true })
    local fd = assert(io.open(file, "wb"))
    fd:write("one\r\ntwo\r\nthree") -- DOS line ends, no newline at the end
    fd:close()
    vim.cmd.edit(vim.fn.fnameescape(file))
    local buf = api.nvim_get_current_buf()
    assert.are.equal("dos", vim.bo[buf].fileformat)
    assert.are.equal("one\r\ntwo\r\nthree", require("elelem.buffers").text(buf))
    reviewing(('!tool edit {"path":"%s","old":"two","new":"TWO"}'):format(file))
    vim.cmd("normal gA")
    H.idle()
    assert.are.same({ "one", "TWO", "three" }, buffer_lines(buf))
    assert.matches("accepted by the user", last_result())
    vim.cmd("silent! only")
    api.nvim_set_current_buf(buf)
    vim.cmd("silent write")
    fd = assert(io.open(file, "rb"))
    assert.are.equal("one\r\nTWO\r\nthree", fd:read("*a"))
    fd:close()
  end)

  it("accepting hunk 1 and rejecting hunk 2 leaves exactly hunk 1", function()
    local buf = open(twenty)
    local content = vim.deepcopy(twenty)
    content[2], content[18] = "CHANGED 2", "CHANGED 18"
    local json = vim.json.encode({ path = file, content = table.concat(content, "\n") .. "\n" })
    local r = reviewing("!tool write " .. json)
    assert.are.same(2, #r.params.hunks)
    assert.matches("^@@ %-1,5 %+1,5 @@", api.nvim_buf_get_lines(r.buf, r.rows[1], r.rows[1] + 1, false)[1])
    local file_win = vim.fn.win_findbuf(buf)[1]
    assert.are.equal(1, api.nvim_win_get_cursor(file_win)[1]) -- the file's window follows
    local marks = api.nvim_buf_get_extmarks(buf, -1, 0, -1, { details = true })
    local labels = {}
    for _, m in ipairs(marks) do
      if m[4].virt_text then
        table.insert(labels, m[2] .. ":" .. m[4].virt_text[1][1])
      end
    end
    assert.are.same({ "0:  ◀ hunk 1 under review", "14:  ◀ hunk 2 under review" }, labels)
    vim.cmd("normal ga") -- hunk 1 (the cursor starts there), then it moves to hunk 2
    assert.are.same(2, r:current())
    assert.are.equal(15, api.nvim_win_get_cursor(file_win)[1])
    vim.cmd("normal gr")
    H.idle()
    local expected = vim.deepcopy(twenty)
    expected[2] = "CHANGED 2"
    assert.are.same(expected, buffer_lines(buf))
    assert.are.same({}, vim.tbl_filter(function(m)
      return m[4].virt_text ~= nil
    end, api.nvim_buf_get_extmarks(buf, -1, 0, -1, { details = true }))) -- the marks are gone
    local result = last_result()
    assert.matches("applied 1 of 2 hunks; hunk 2 %(lines 15.-20%) was rejected by the user", result)
    assert.matches("%+CHANGED 2", result)
    assert.is_nil(result:find("+CHANGED 18", 1, true))
    assert.matches("review of notes%.txt → partial: hunks 1 of 2 accepted", H.text())
  end)

  it("a rejection with a reason reaches the model, and the buffer is untouched", function()
    local buf = open(twenty)
    reviewing(('!tool edit {"path":"%s","old":"line 5","new":"line five"}'):format(file))
    vim.cmd("ElelemReject keep the digits")
    H.idle()
    assert.are.same(twenty, buffer_lines(buf))
    assert.matches("the user rejected the change: keep the digits", last_result())
  end)

  it("a buffer changed during the review gives conflict and stays as the user left it", function()
    local buf = open(twenty)
    reviewing(('!tool edit {"path":"%s","old":"line 7","new":"line seven"}'):format(file))
    api.nvim_buf_set_lines(buf, 0, 1, false, { "the user's own edit" })
    vim.cmd("normal gA")
    H.idle()
    local expected = vim.deepcopy(twenty)
    expected[1] = "the user's own edit"
    assert.are.same(expected, buffer_lines(buf))
    assert.matches("conflict: the file changed since you read it; read it again", last_result())
  end)

  it("a buffer changed after the agent read it gives conflict before any review", function()
    local buf = open(twenty)
    local files = require("elelem.daemon").handlers.request
    local read = files["files/read"]
    local reads = 0
    files["files/read"] = function(params, id)
      local answer = read(params, id)
      reads = reads + 1
      if reads == 1 then -- the user types right after the agent's read
        vim.schedule(function()
          api.nvim_buf_set_lines(buf, 2, 3, false, { "typed after the read" })
        end)
      end
      return answer
    end
    local content = table.concat(twenty, "\n"):gsub("line 10", "line ten") .. "\n"
    local script = vim.json.encode({ { "read", { path = file } }, { "write", { path = file, content = content } } })
    local ok, err = pcall(H.turn, "!tools " .. script)
    files["files/read"] = read
    assert(ok, err)
    assert.are.same(0, #require("elelem.review").open)
    local expected = vim.deepcopy(twenty)
    expected[3] = "typed after the read"
    assert.are.same(expected, buffer_lines(buf))
    assert.matches("conflict: the file changed since you read it", last_result())
  end)

  it("accept all for this turn applies the later changes unreviewed", function()
    local buf = open(twenty)
    local script = vim.json.encode({
      { "edit", { path = file, old = "line 3\n", new = "line three\n" } },
      { "edit", { path = file, old = "line 19", new = "line nineteen" } },
    })
    reviewing("!tools " .. script)
    vim.cmd("normal gT")
    H.idle()
    assert.are.same("line three", buffer_lines(buf)[3])
    assert.are.same("line nineteen", buffer_lines(buf)[19])
    assert.matches("accepted: the user accepts every change in this turn", last_result())
    vim.cmd("silent! only")
    api.nvim_set_current_buf(buf)
    vim.cmd("silent normal! u")
    assert.are.same("line 19", buffer_lines(buf)[19]) -- each change is its own undo step
  end)

  it("cancelling the turn closes the review and changes nothing", function()
    local buf = open(twenty)
    reviewing(('!tool edit {"path":"%s","old":"line 9","new":"line nine"}'):format(file))
    vim.cmd("ElelemCancel")
    H.idle()
    assert.are.same(0, #require("elelem.review").open)
    assert.are.same(twenty, buffer_lines(buf))
  end)

  it("a new file is reviewed and, accepted, written by the daemon", function()
    vim.cmd("silent! only")
    local new = H.project .. "/brand-new.txt"
    os.remove(new)
    local r = reviewing(('!tool write {"path":"%s","content":"fresh\\n"}'):format(new))
    assert.matches("%(new file%)", api.nvim_buf_get_lines(r.buf, 0, 1, false)[1])
    vim.cmd("normal gA")
    H.idle()
    assert.are.same({ "fresh" }, vim.fn.readfile(new))
    assert.matches("accepted by the user", last_result())
  end)

  it("a file that is not open is reviewed and the daemon writes the disk", function()
    vim.cmd("silent! only")
    pcall(vim.cmd.bwipeout, { file, bang = true })
    vim.fn.writefile(twenty, file)
    reviewing(('!tool edit {"path":"%s","old":"line 4","new":"line four"}'):format(file))
    vim.cmd("ElelemAccept")
    H.idle()
    local expected = vim.deepcopy(twenty)
    expected[4] = "line four"
    assert.are.same(expected, vim.fn.readfile(file))
  end)

  it("a review the daemon withdraws ($/cancelRequest) closes and changes nothing", function()
    H.shutdown()
    H.setup({ env = vim.tbl_extend("force", H.options.env, { ELELEM_REVIEW_TIMEOUT = "1" }) })
    H.reset()
    seen, stop = H.record()
    local buf = open(twenty)
    local handlers = require("elelem.daemon").handlers
    local cancel, closed_by_cancel = handlers.cancel, nil
    local r
    handlers.cancel = function(id)
      cancel(id)
      closed_by_cancel = r and r.finished and H.session().busy -- closed then, before the turn's end
    end
    r = reviewing(('!tool edit {"path":"%s","old":"line 6","new":"line six"}'):format(file))
    H.idle()
    handlers.cancel = cancel
    assert.is_true(closed_by_cancel)
    assert.is_true(r.finished)
    assert.is_false(vim.api.nvim_buf_is_valid(r.buf))
    assert.are.same(twenty, buffer_lines(buf))
    assert.matches("the review got no answer within 1 s", last_result())
    H.shutdown()
  end)
end)
