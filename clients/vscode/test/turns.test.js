// Turns against the real daemon (stub provider), through the fake vscode module: streaming,
// tool calls, Stop, slash commands and completion, input/ask, the editor commands.
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("fs");
const path = require("path");
const { vscode, fake, activate, deactivate, waitFor, send } = require("./helpers");

/** Activate, run the body, always deactivate. */
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

const types = (posted) => posted.map((m) => m.type);

withChat("a streamed turn reaches the webview as messages in order", async ({ view }) => {
  const { last, posted } = await send(view, "!stream 5");
  assert.equal(last.type, "turnEnd");
  assert.equal(last.stopReason, "end_turn");
  const kinds = types(posted).filter((t) => t !== "busy");
  assert.deepEqual(kinds, ["session", "user", "thinking", "saying", "saying", "saying", "saying", "saying", "turnEnd"]);
  const said = posted.filter((m) => m.type === "saying");
  assert.equal(said.map((m) => m.text).join(""), "tok0 tok1 tok2 tok3 tok4 ");
  assert.ok(said.every((m) => m.turnId === last.turnId));
  assert.equal(posted.find((m) => m.type === "session").provider, "stub");
  assert.equal(posted.find((m) => m.type === "user").text, "!stream 5");
});

withChat("a tool call shows its arguments and its result", async ({ view }) => {
  const { last, posted } = await send(view, '!tool execute {"command":"echo hi"}');
  assert.equal(last.stopReason, "end_turn");
  const doing = posted.find((m) => m.type === "doing");
  assert.deepEqual([doing.name, doing.arguments], ["execute", { command: "echo hi" }]);
  const result = posted.find((m) => m.type === "result");
  assert.equal(result.id, doing.id);
  assert.equal(result.ok, true);
  assert.match(JSON.stringify(result.result), /hi/);
  assert.ok(posted.indexOf(doing) < posted.indexOf(result));
  assert.equal(posted.filter((m) => m.type === "saying").at(-1).text, "done.");
});

withChat("Stop cancels a long turn", async ({ view }) => {
  const from = view.posted.length;
  view.receive({ type: "send", text: "!stream 300 20" });
  await waitFor(view, { type: "saying" }, { from });
  await waitFor(view, { type: "busy", busy: true }, { from });
  view.receive({ type: "stop" });
  const end = await waitFor(view, { type: "turnEnd" }, { from });
  assert.equal(end.stopReason, "cancelled");
  const said = view.posted.slice(from).filter((m) => m.type === "saying");
  assert.ok(said.length < 300, `${said.length} deltas`);
  await waitFor(view, { type: "busy", busy: false }, { from });
  // the session still works afterwards
  const again = await send(view, "!echo after");
  assert.equal(again.last.reply, "after");
});

withChat("the Stop command cancels too", async ({ view }) => {
  const from = view.posted.length;
  view.receive({ type: "send", text: "!stream 300 20" });
  await waitFor(view, { type: "saying" }, { from });
  await vscode.commands.executeCommand("elelem.stop");
  assert.equal((await waitFor(view, { type: "turnEnd" }, { from })).stopReason, "cancelled");
});

withChat("a slash command runs in the daemon and its output is shown", async ({ view }) => {
  const { last } = await send(view, "/help");
  assert.equal(last.type, "commandOutput");
  assert.equal(last.line, "/help");
  assert.match(last.output, /context/);
  assert.match(last.output, /provider/);
  const unknown = await send(view, "/nope");
  assert.equal(unknown.last.type, "commandOutput");
  assert.match(unknown.last.output, /nope/);
});

withChat("/exit closes the session; the next message starts another", async ({ view, chat }) => {
  await send(view, "!echo one");
  const first = chat.sessionId;
  const { posted } = await send(view, "/exit");
  assert.equal(chat.sessionId, undefined);
  assert.match(posted.find((m) => m.type === "say").text, /Session closed/);
  const next = await send(view, "!echo two");
  assert.equal(next.last.reply, "two");
  assert.notEqual(chat.sessionId, first);
});

withChat("/model switches the session's model and the header follows", async ({ view }) => {
  await send(view, "!echo one");
  const { posted } = await send(view, "/model other-model");
  const session = posted.find((m) => m.type === "session");
  assert.equal(session.model, "other-model");
});

withChat("slash-command completion comes from the session's commands", async ({ view }) => {
  await send(view, "!echo hi");
  const from = view.posted.length;
  view.receive({ type: "complete", text: "/he" });
  const done = await waitFor(view, { type: "completions" }, { from });
  assert.deepEqual(done.items.map((i) => i.label), ["/help"]);
  assert.ok(done.items[0].detail);
  view.receive({ type: "complete", text: "/" });
  const all = await waitFor(view, (m) => m.type === "completions" && m.text === "/", { from });
  assert.ok(all.items.length >= 5);
  view.receive({ type: "complete", text: "/context j" });
  const args = await waitFor(view, (m) => m.type === "completions" && m.text === "/context j", { from });
  assert.deepEqual(args.items, [{ label: "json" }]);
  view.receive({ type: "complete", text: "/provider s" });
  const providers = await waitFor(view, (m) => m.type === "completions" && m.text === "/provider s", { from });
  assert.deepEqual(providers.items.map((i) => i.label), ["stub"]);
});

withChat("input/ask is answered with an input box", async ({ view }) => {
  fake.answers.push((kind, prompt) => (kind === "input" && prompt === "ok?" ? "yes" : undefined));
  const { last, posted } = await send(view, '!tool interview {"question":"ok?"}');
  assert.equal(last.stopReason, "end_turn");
  assert.deepEqual(fake.asked.map((a) => [a.kind, a.what]), [["input", "ok?"]]);
  assert.deepEqual(posted.filter((m) => m.type === "ask").map((m) => m.prompt), ["ok?"]);
  assert.equal(posted.find((m) => m.type === "answer").text, "yes");
  const result = posted.find((m) => m.type === "result");
  assert.equal(result.ok, true);
  assert.match(JSON.stringify(result.result), /yes/);
});

withChat("input/ask with options is a quick pick; dismissing it answers nothing", async ({ view }) => {
  fake.answers.push((kind, items) => (kind === "pick" ? items[1] : undefined));
  let r = await send(view, '!tool interview {"question":"which?","options":["red","blue"]}');
  assert.deepEqual(fake.asked[0].what, ["red", "blue"]);
  assert.match(JSON.stringify(r.posted.find((m) => m.type === "result").result), /blue/);
  fake.answers.push(() => undefined);
  r = await send(view, '!tool interview {"question":"still there?"}');
  assert.equal(r.posted.find((m) => m.type === "answer").text, null);
  assert.equal(r.posted.find((m) => m.type === "result").ok, false);
});

withChat("a provider failure ends the turn with its error", async ({ view }) => {
  const { last } = await send(view, "!fail the model is down");
  assert.equal(last.stopReason, "error");
  assert.equal(last.reply, "Error: the model is down");
});

withChat("Ask About Selection sends the question with the file, lines and code", async ({ view }) => {
  const ws = fake.workspaceFolder;
  fs.mkdirSync(path.join(ws, "src"));
  const file = path.join(ws, "src", "x.py");
  const code = "def f():\n    return 1\n";
  fake.activeTextEditor = {
    document: { uri: vscode.Uri.file(file), languageId: "python", getText: () => code },
    selection: { isEmpty: false, start: { line: 1, character: 0 }, end: { line: 3, character: 0 } },
  };
  fake.answers.push(() => "!echo explained");
  const from = view.posted.length;
  await vscode.commands.executeCommand("elelem.askAboutSelection");
  const user = await waitFor(view, { type: "user" }, { from });
  assert.equal(user.text, "!echo explained\n\nsrc/x.py:2-3\n```python\ndef f():\n    return 1\n```");
  assert.equal((await waitFor(view, { type: "turnEnd" }, { from })).stopReason, "end_turn");
});

withChat("Ask About Selection without a selection says so", async () => {
  await vscode.commands.executeCommand("elelem.askAboutSelection");
  assert.deepEqual(fake.messages, [["warning", "Elelem: select some code first."]]);
});

withChat("Show Context opens what the model sees as Markdown", async ({ view }) => {
  await send(view, "!echo remembered");
  await vscode.commands.executeCommand("elelem.showContext");
  const [document] = fake.documents;
  assert.equal(document.language, "markdown");
  assert.match(document.content, /^## system/);
  assert.match(document.content, /## user\n\n!echo remembered/);
  assert.match(document.content, /## assistant\n\nremembered/);
});
