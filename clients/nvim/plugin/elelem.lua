-- elelem.nvim user commands. Everything else loads on first use from lua/elelem/.
if vim.g.loaded_elelem then
  return
end
vim.g.loaded_elelem = true

local function elelem()
  return require("elelem")
end

local command = vim.api.nvim_create_user_command

command("Elelem", function(opts)
  elelem().open(opts.args)
end, {
  nargs = "*",
  desc = "elelem: open the chat; send a prompt or /command if given",
  complete = function(arglead, cmdline)
    return elelem().complete(arglead, cmdline)
  end,
})

command("ElelemCancel", function()
  elelem().cancel()
end, { desc = "elelem: cancel the running turn" })

command("ElelemModel", function(opts)
  elelem().model(opts.args)
end, { nargs = "?", desc = "elelem: pick the model or provider (the daemon's list, as /model); or name one" })

command("ElelemClose", function()
  elelem().close()
end, { desc = "elelem: close this tab's chat (the session goes on; :Elelem shows it)" })

command("ElelemNew", function()
  elelem().new()
end, { desc = "elelem: start a fresh session in this tab" })

command("ElelemContext", function(opts)
  elelem().context(opts.args)
end, {
  nargs = "*",
  complete = function()
    return { "edit", "delete" }
  end,
  desc = "elelem: show what the model sees next turn (/context); `edit N` opens message N to edit",
})

command("ElelemSelection", function(opts)
  elelem().selection(opts.line1, opts.line2, opts.args)
end, { range = true, nargs = "*", desc = "elelem: ask about the selected lines" })

command("ElelemResume", function()
  elelem().resume()
end, { desc = "elelem: resume the last stored session of this directory" })

command("ElelemSessions", function()
  elelem().pick()
end, { desc = "elelem: pick a stored session" })

command("ElelemRestart", function()
  elelem().restart()
end, { desc = "elelem: stop the daemon; the next command starts it again" })

command("ElelemAccept", function(opts)
  elelem().accept(opts.args)
end, {
  nargs = "?",
  complete = function()
    return { "turn" }
  end,
  desc = "elelem: accept the open review's change (`turn`: and every later change of this turn)",
})

command("ElelemReview", function()
  elelem().review()
end, { desc = "elelem: move into the open review (shown again if hidden)" })

command("ElelemAnswer", function(opts)
  elelem().answer(opts.args)
end, {
  nargs = "*",
  complete = function()
    return elelem().answer_options()
  end,
  desc = "elelem: answer the question waiting in the chat (no answer: go to it)",
})

command("ElelemReject", function(opts)
  elelem().reject(opts.args)
end, { nargs = "*", desc = "elelem: reject the open review's change, with an optional reason for the model" })

command("ElelemUndo", function()
  elelem().undo()
end, { desc = "elelem: undo the last turn (its files and its messages), after a confirmation" })

command("ElelemRewind", function(opts)
  elelem().rewind(opts.args)
end, { nargs = "?", desc = "elelem: rewind to before a turn (picked from a list, or N)" })

command("ElelemAdd", function(opts)
  if opts.range > 0 then
    elelem().add(opts.line1, opts.line2, opts.bang)
  else
    elelem().add(nil, nil, opts.bang)
  end
end, { range = true, bang = true, desc = "elelem: attach this file (or the range) to the next prompt; ! clears" })

command("ElelemMcp", function()
  elelem().mcp()
end, { desc = "elelem: show this tab's MCP servers and their state" })

command("ElelemMode", function(opts)
  elelem().mode(opts.args)
end, {
  nargs = "?",
  complete = function()
    return elelem().mode_names()
  end,
  desc = "elelem: switch this tab's session to a mode (build, plan, review, verify, ...), or pick one",
})
