// Issue 20 part 2 through the real daemon (stub provider): a message sent while a turn runs
// is a steer (session/steer, event/steer; not_running falls back to a turn), `/context edit
// N` and "Elelem: Apply Context Edit" (session/editContext), and a `task` sub-agent's events
// (parentToolCallId) reaching the chat inside the task call.
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("fs");
const path = require("path");
const { vscode, fake, activate, deactivate, waitFor, send, until } = require("./helpers");

function withChat(name, body, settings, options) {
  test(name, async () => {
    const env = await activate(settings, options);
    try {
      await body(env);
    } catch (error) {
      console.error(`log of "${name}":\n${fake.logLines.join("\n")}`);
      throw error;
    } finally {
      await deactivate(env.context);
    }
  });
}

/** A turn whose one tool call waits for the file `gate` in the workspace. */
const gated = (dir) => `!tool execute ${JSON.stringify({ command: `while [ ! -e ${path.join(dir, "gate")} ]; do sleep 0.05; done; echo ran` })}`;

withChat("a message sent while a turn runs is a steer: queued, then taken, and the model answers it", async ({ view }) => {
  await send(view, "!echo hi"); // the session is up
  const from = view.posted.length;
  view.receive({ type: "send", text: gated(fake.workspaceFolder) });
  await waitFor(view, (m) => m.type === "doing" && m.name === "execute", { from });
  view.receive({ type: "send", text: "also look at b.py" });
  const queued = await waitFor(view, { type: "steerQueued" }, { from });
  assert.equal(queued.text, "also look at b.py");
  assert.ok(!view.posted.slice(from).some((m) => m.type === "error" || m.type === "unsent"), "not refused");
  assert.ok(!view.posted.slice(from).some((m) => m.type === "user" && m.text === "also look at b.py"), "not a turn of its own");
  fs.writeFileSync(path.join(fake.workspaceFolder, "gate"), "");
  const taken = await waitFor(view, { type: "steer" }, { from });
  assert.equal(taken.text, "also look at b.py");
  const end = await waitFor(view, { type: "turnEnd" }, { from });
  assert.equal(end.reply, "steered: also look at b.py. done.");
  assert.ok(view.posted.indexOf(queued) < view.posted.indexOf(taken));
  assert.ok(view.posted.indexOf(taken) < view.posted.indexOf(end));
});

withChat("a steer that finds no turn running (not_running) goes as a turn of its own", async ({ view, chat }) => {
  await send(view, "!echo hi");
  const from = view.posted.length;
  // The turn just ended on the daemon's side; the client has not seen its answer yet.
  let ended;
  chat.busy = true;
  chat.idle = new Promise((resolve) => (ended = resolve));
  view.receive({ type: "send", text: "!echo as a turn" });
  await new Promise((resolve) => setTimeout(resolve, 500)); // the steer is refused meanwhile
  assert.ok(!view.posted.slice(from).some((m) => m.type === "user"), "it waits for the turn the client sees");
  chat.busy = false;
  ended();
  const end = await waitFor(view, { type: "turnEnd" }, { from });
  assert.equal(end.reply, "!echo as a turn".slice(6));
  assert.ok(!view.posted.slice(from).some((m) => m.type === "steerQueued" || m.type === "error"));
  assert.ok(view.posted.slice(from).some((m) => m.type === "user" && m.text === "!echo as a turn"));
});

withChat("a refused steer is shown in words and the input given back; a command or attachments cannot steer", async ({ view }) => {
  await send(view, "!echo hi");
  const from = view.posted.length;
  view.receive({ type: "send", text: gated(fake.workspaceFolder) });
  await waitFor(view, (m) => m.type === "doing" && m.name === "execute", { from });
  const long = "x".repeat(65537); // over the daemon's bound: invalid_params
  view.receive({ type: "send", text: long });
  const error = await waitFor(view, { type: "error" }, { from });
  assert.match(error.text, /^Steer not sent: .*invalid_params/);
  const unsent = await waitFor(view, { type: "unsent" }, { from });
  assert.equal(unsent.text, long);
  let at = view.posted.length;
  view.receive({ type: "send", text: "/context" });
  assert.match((await waitFor(view, { type: "error" }, { from: at })).text, /a command waits for the turn to end/);
  assert.equal((await waitFor(view, { type: "unsent" }, { from: at })).text, "/context");
  at = view.posted.length;
  view.receive({ type: "send", text: "see this", attachments: [{ type: "file", path: "a.txt" }] });
  assert.match((await waitFor(view, { type: "error" }, { from: at })).text, /attachments cannot go with a steer/);
  assert.deepEqual((await waitFor(view, { type: "unsent" }, { from: at })).attachments, [{ type: "file", path: "a.txt" }]);
  fs.writeFileSync(path.join(fake.workspaceFolder, "gate"), "");
  const end = await waitFor(view, { type: "turnEnd" }, { from });
  assert.equal(end.reply, "done.", "the refused steers changed nothing");
  assert.ok(!view.posted.slice(from).some((m) => m.type === "steer" || m.type === "steerQueued"));
});

withChat("/context edit N opens message N; Apply Context Edit replaces it (session/editContext), empty deletes it", async ({ view, chat }) => {
  await send(view, "!echo first answer");
  const { posted } = await send(view, "/context edit 3");
  const info = posted.find((m) => m.type === "commandOutput");
  assert.match(info.output, /Message 3 \(assistant\) is open/);
  const document = fake.documents.at(-1);
  assert.equal(document.getText(), "first answer");
  assert.equal(fake.shown.at(-1), document);
  document.type("an edited answer");
  fake.activeTextEditor = { document };
  await vscode.commands.executeCommand("elelem.applyContextEdit");
  assert.deepEqual(fake.messages.filter(([level]) => level === "error"), []);
  let messages = await chat.context();
  assert.equal(messages[2].content, "an edited answer");
  // the user message, emptied: deleted
  await send(view, "/context edit 2");
  const user = fake.documents.at(-1);
  assert.equal(user.getText(), "!echo first answer");
  user.type("  ");
  fake.activeTextEditor = { document: user };
  await vscode.commands.executeCommand("elelem.applyContextEdit");
  messages = await chat.context();
  assert.deepEqual(messages.map((m) => m.role), ["system", "assistant"]);
  assert.ok(fake.messages.some(([level, text]) => level === "info" && /message 2 deleted/.test(text)));
});

withChat("a bad context edit is refused in words and changes nothing", async ({ view, chat }) => {
  await send(view, "!echo an answer");
  for (const [line, why] of [
    ["/context edit 1", /system prompt cannot be edited/],
    ["/context edit 9", /No message 9: the context holds 3/],
    ["/context edit x", /Usage: \/context edit N/],
  ]) {
    const { last } = await send(view, line);
    assert.equal(last.type, "error");
    assert.match(last.text, why);
  }
  // no message open in this editor
  fake.activeTextEditor = { document: { uri: vscode.Uri.file("/elsewhere.txt"), getText: () => "" } };
  await vscode.commands.executeCommand("elelem.applyContextEdit");
  assert.match(fake.messages.at(-1)[1], /Open a message with \/context edit N first/);
  // the message went away meanwhile: the daemon's invalid_edit, in words
  await send(view, "/context edit 3");
  const document = fake.documents.at(-1);
  await send(view, "/context delete 2-3");
  document.type("too late");
  fake.activeTextEditor = { document };
  const from = view.posted.length;
  await vscode.commands.executeCommand("elelem.applyContextEdit");
  const error = await waitFor(view, { type: "error" }, { from });
  assert.match(error.text, /Context edit not applied: .*invalid_edit/);
  assert.match(fake.messages.at(-1)[1], /invalid_edit/);
  assert.deepEqual((await chat.context()).map((m) => m.role), ["system"]);
});

withChat("a task sub-agent's events carry parentToolCallId and come inside the task call", async ({ view }) => {
  fs.writeFileSync(path.join(fake.workspaceFolder, "a.txt"), "alpha\n");
  const { posted } = await send(view, `!tool task ${JSON.stringify({ prompt: '!tool read {"path": "a.txt"}' })}`);
  const task = posted.find((m) => m.type === "doing" && m.name === "task");
  assert.ok(task, JSON.stringify(posted.map((m) => m.type)));
  assert.equal(task.parentToolCallId, undefined);
  const taskResult = posted.find((m) => m.type === "result" && m.id === task.id && !m.parentToolCallId);
  const child = posted.filter((m) => m.parentToolCallId);
  assert.ok(child.some((m) => m.type === "doing" && m.name === "read"), JSON.stringify(child));
  const read = child.find((m) => m.type === "result" && m.name === "read");
  assert.match(JSON.stringify(read.result), /alpha/);
  assert.ok(child.every((m) => m.parentToolCallId === task.id));
  const first = posted.indexOf(child[0]);
  const last = posted.indexOf(child.at(-1));
  assert.ok(posted.indexOf(task) < first && last < posted.indexOf(taskResult), "the child's events come between the task call and its result");
  assert.equal(taskResult.ok, true);
  assert.equal(taskResult.result.result, "done.");
});
