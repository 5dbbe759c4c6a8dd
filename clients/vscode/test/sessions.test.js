// Against a scripted daemon (test/servers/): the initialize params, and stored sessions and
// permission questions with fixed data. stored.test.js runs the same against the real daemon.
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const path = require("path");
const { vscode, fake, activate, deactivate, waitFor, send } = require("./helpers");

const SERVER = `${JSON.stringify(process.execPath)} ${JSON.stringify(path.join(__dirname, "servers/stored-daemon.js"))}`;

function withChat(name, body, settings = {}) {
  test(name, async () => {
    const env = await activate({ "elelem.command": SERVER, ...settings });
    try {
      await body(env);
    } finally {
      await deactivate(env.context);
    }
  });
}

withChat("initialize sends processId, clientInfo and the capabilities (input.ask, editorState, fs, files); stderr goes to the log", async ({ view }) => {
  await send(view, "hello");
  const line = fake.logLines.find((l) => l.includes("[daemon] initialize "));
  const params = JSON.parse(line.slice(line.indexOf("{")));
  assert.equal(params.processId, process.pid);
  assert.equal(params.clientInfo.name, "elelem-vscode");
  assert.equal(params.clientInfo.version, require("../package.json").version);
  assert.deepEqual(params.capabilities, {
    input: { ask: true },
    editorState: true,
    fs: { readTextFile: true, writeTextFile: true },
    files: { read: true, apply: true, review: true },
  });
});

withChat("Resume Last Session loads the most recent stored session and redraws it", async ({ view, chat }) => {
  const from = view.posted.length;
  await vscode.commands.executeCommand("elelem.resumeLastSession");
  const history = await waitFor(view, { type: "history" }, { from });
  assert.equal(chat.sessionId, "newest");
  assert.deepEqual(history.messages.map((m) => m.role), ["user", "assistant"]);
  assert.equal((await waitFor(view, { type: "session" }, { from })).sessionId, "newest");
  assert.equal((await send(view, "more")).last.reply, "newest: more");
});

withChat("Open Session… lists stored sessions, newest first, and opens the pick", async ({ view, chat }) => {
  await send(view, "hi");
  const first = chat.sessionId;
  fake.answers.push((kind, items) => items.find((i) => i.label === "Older talk"));
  await vscode.commands.executeCommand("elelem.openSession");
  const items = fake.asked[0].what;
  assert.deepEqual(items.map((i) => i.label), ["Fix the parser", "Older talk"]);
  assert.match(items[0].detail, /newest/);
  await waitFor(view, { type: "history" });
  assert.equal(chat.sessionId, "older");
  const { closed } = await chat.daemon.request("session/list", {});
  assert.deepEqual(closed, [first], "the session it replaced is closed");
});

withChat("Open Session… dismissed changes nothing", async ({ view, chat }) => {
  await send(view, "hi");
  const before = chat.sessionId;
  await vscode.commands.executeCommand("elelem.openSession");
  assert.equal(chat.sessionId, before);
  assert.ok(!view.posted.some((m) => m.type === "history"));
});

withChat("a permission question offers allow, deny, always and never, each with a label and a description", async ({ view }) => {
  fake.answers.push((kind, items) => items.find((i) => i.answer === "always"));
  const { last, posted } = await send(view, "!permission");
  const [asked] = fake.asked;
  assert.equal(asked.kind, "pick");
  assert.equal(asked.options.title, "Elelem wants to run execute");
  assert.deepEqual(asked.what.map((i) => i.answer), ["allow", "deny", "always", "never", "later"]);
  assert.deepEqual(asked.what.map((i) => i.label), ["$(check) Allow", "$(close) Deny", "$(check-all) Always allow", "$(circle-slash) Never allow", "Later"]);
  assert.ok(asked.what.every((i) => i.description), "every option is described");
  assert.equal(asked.what[4].description, 'answer "later"', "an option this client does not know is still described");
  assert.match(asked.what[0].detail, /rm -rf build/);
  assert.equal(last.reply, 'answer: {"text":"always"}');
  assert.equal(posted.find((m) => m.type === "ask").kind, "permission");
}, { "elelem.askInChat": false });

withChat("a permission question is asked in the chat (the default): buttons, no quick pick", async ({ view }) => {
  const asked = new Promise((resolve) => {
    const listener = (m) => {
      if (m.type !== "ask") return;
      view.bus.off("message", listener);
      resolve(m);
    };
    view.bus.on("message", listener);
  });
  const turn = send(view, "!permission");
  const ask = await asked;
  assert.deepEqual(ask.choices.map((c) => c.answer), ["allow", "deny", "always", "never", "later"]);
  assert.deepEqual(ask.choices.map((c) => c.label), ["Allow", "Deny", "Always allow", "Never allow", "Later"]);
  assert.ok(ask.choices.every((c) => c.description), "every button is described");
  view.receive({ type: "askAnswer", askId: ask.askId, answer: "always" });
  view.receive({ type: "askAnswer", askId: ask.askId, answer: "deny" }); // a second click: nothing
  const { last, posted } = await turn;
  assert.equal(last.reply, 'answer: {"text":"always"}');
  assert.equal(fake.asked.length, 0, "no quick pick");
  assert.deepEqual(posted.filter((m) => m.type === "answer").map((m) => m.text), ["always"]);
});

withChat("a question asked while the chat is hidden: a badge on the view, a status bar item, a notification that opens it (issue 40)", async ({ view }) => {
  view.visible = false; // the user closed the side bar
  fake.answers.push(async (kind, choices) => {
    assert.deepEqual(choices, ["Open Chat"]);
    return undefined; // the user reads it, then opens the chat from the status bar
  });
  const asked = new Promise((resolve) => {
    const listener = (m) => {
      if (m.type !== "ask") return;
      view.bus.off("message", listener);
      resolve(m);
    };
    view.bus.on("message", listener);
  });
  const turn = send(view, "!permission");
  const ask = await asked;
  assert.deepEqual(view.badge, { value: 1, tooltip: "Elelem asks a question" });
  const item = fake.statusItems.find((i) => i.visible);
  assert.ok(item, "no status bar item");
  assert.match(item.text, /Elelem asks/);
  assert.equal(item.command, "elelem.chat.focus");
  assert.ok(fake.messages.some(([level, text]) => level === "warning" && /^Elelem asks: /.test(text)), "no notification");
  view.visible = true;
  view.receive({ type: "askAnswer", askId: ask.askId, answer: "deny" });
  await turn;
  assert.equal(view.badge, undefined, "the badge stays after the answer");
  assert.ok(!fake.statusItems.some((i) => i.visible), "the status bar item stays after the answer");
});

withChat("a question asked while the chat is in view: the badge and the item, no notification", async ({ view }) => {
  const asked = new Promise((resolve) => {
    const listener = (m) => {
      if (m.type !== "ask") return;
      view.bus.off("message", listener);
      resolve(m);
    };
    view.bus.on("message", listener);
  });
  const turn = send(view, "!permission");
  const ask = await asked;
  assert.equal(view.badge.value, 1);
  assert.ok(!fake.messages.some(([, text]) => /^Elelem asks: /.test(text)), "a notification while the chat is in view");
  view.receive({ type: "askAnswer", askId: ask.askId, answer: "deny" });
  await turn;
  assert.equal(view.badge, undefined);
});
