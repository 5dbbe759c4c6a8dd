// The extension's lifecycle against the real daemon (stub provider), through the fake vscode
// module: activation, settings, crashes and restarts, shutdown, workspace trust.
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("fs");
const path = require("path");
const { vscode, fake, activate, deactivate, waitFor, send, alive, until, workspace, daemonCommand } = require("./helpers");

const COMMANDS = [
  "elelem.openChat",
  "elelem.askAboutSelection",
  "elelem.showContext",
  "elelem.newSession",
  "elelem.stop",
  "elelem.restartDaemon",
  "elelem.resumeLastSession",
  "elelem.openSession",
  "elelem.undoLastTurn",
  "elelem.restoreCheckpoint",
  "elelem.applyContextEdit",
  "elelem.pickModel",
  "elelem.review.acceptAll",
  "elelem.review.rejectAll",
  "elelem.review.chooseHunks",
  "elelem.review.acceptAllForTurn",
  "elelem.review.acceptHunk",
  "elelem.review.rejectHunk",
];

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

withChat("activation registers the commands and a chat view with a strict CSP", async ({ view }) => {
  for (const id of COMMANDS) assert.ok(fake.commands.has(id), id);
  const pkg = require("../package.json");
  assert.deepEqual(pkg.contributes.commands.map((c) => c.command).sort(), [...COMMANDS].sort());
  const html = view.webview.html;
  const csp = /http-equiv="Content-Security-Policy" content="([^"]+)"/.exec(html)[1];
  assert.match(csp, /default-src 'none'/);
  const nonce = /script-src 'nonce-([^']+)'/.exec(csp)[1];
  assert.ok(nonce.length >= 16);
  const scripts = [...html.matchAll(/<script([^>]*)>/g)].map((m) => m[1]);
  assert.equal(scripts.length, 1);
  assert.ok(scripts[0].includes(`nonce="${nonce}"`));
  assert.doesNotMatch(html, /https?:\/\//);
  assert.equal(view.webview.options.enableScripts, true);
  // nothing starts before the first message
  assert.deepEqual(types(view.posted), ["clear", "busy", "scrollEnd"]);
});

withChat("a daemon crash is reported; the next message restarts it and resumes the stored session", async ({ view, chat }) => {
  await send(view, "!echo one");
  const first = chat.sessionId;
  const pid = chat.daemonPid;
  assert.ok(alive(pid));
  const from = view.posted.length;
  process.kill(pid, "SIGKILL");
  const exited = await waitFor(view, { type: "daemonExited" }, { from });
  assert.equal(exited.signal, "SIGKILL");
  assert.equal(exited.resume, true, "the notice says the session will be resumed");
  const { last, posted } = await send(view, "!echo two");
  assert.equal(last.reply, "two");
  assert.notEqual(chat.daemonPid, pid);
  assert.equal(chat.sessionId, first, "the same session, not a new one");
  assert.equal(posted.find((m) => m.type === "session").sessionId, first);
  assert.ok(!posted.some((m) => m.type === "history"), "the panel shows the conversation already");
  const said = posted.filter((m) => m.type === "say").map((m) => m.text);
  assert.ok(said.some((t) => /Resumed the session from its stored copy/.test(t)), said.join("\n"));
  const context = (await chat.context()).map((m) => m.content);
  assert.ok(context.includes("!echo one") && context.includes("one"), "the model sees the old conversation");
  assert.ok(fake.logLines.some((l) => /exited unexpectedly/.test(l)));
});

withChat("a crash of a session that was never stored says that a new session starts", async ({ view, chat }) => {
  view.receive({ type: "newSession" }); // a session nobody talked to: nothing stored
  await waitFor(view, { type: "session" });
  const first = chat.sessionId;
  const from = view.posted.length;
  process.kill(chat.daemonPid, "SIGKILL");
  assert.equal((await waitFor(view, { type: "daemonExited" }, { from })).resume, true);
  const { last, posted } = await send(view, "!echo two");
  assert.equal(last.reply, "two");
  assert.notEqual(chat.sessionId, first);
  assert.ok(posted.some((m) => m.type === "say" && /never stored.*new session/.test(m.text)));
  assert.ok(!posted.some((m) => m.type === "error"));
});

withChat("a crash during a turn ends the turn with one notice", async ({ view, chat }) => {
  const from = view.posted.length;
  view.receive({ type: "send", text: "!stream 300 20" });
  await waitFor(view, { type: "saying" }, { from });
  process.kill(chat.daemonPid, "SIGKILL");
  await waitFor(view, { type: "daemonExited" }, { from });
  await waitFor(view, { type: "busy", busy: false }, { from });
  assert.equal(view.posted.slice(from).filter((m) => m.type === "error").length, 0);
  assert.equal((await send(view, "!echo back")).last.reply, "back");
});

withChat("deactivation shuts the daemon down", async ({ view, chat, context }) => {
  await send(view, "!echo hi");
  const pid = chat.daemonPid;
  const { extension } = require("./helpers");
  await extension.deactivate();
  await until(() => !alive(pid), 5000);
  assert.ok(!view.posted.some((m) => m.type === "daemonExited"), "a shutdown is not a crash");
  void context;
});

withChat("after a crash, a daemon that cannot start again says why", async ({ view, chat }) => {
  await send(view, "!echo one");
  const from = view.posted.length;
  process.kill(chat.daemonPid, "SIGKILL");
  await waitFor(view, { type: "daemonExited" }, { from });
  fake.settings["elelem.command"] = "/nonexistent/elelem daemon";
  const { last } = await send(view, "!echo two");
  assert.equal(last.type, "error");
  assert.match(last.text, /Could not start the elelem daemon/);
});

withChat("Restart Daemon stops it; the next message starts a new one, which resumes the session", async ({ view, chat }) => {
  await send(view, "!echo one");
  const first = chat.sessionId;
  const pid = chat.daemonPid;
  await vscode.commands.executeCommand("elelem.restartDaemon");
  await until(() => !alive(pid), 5000);
  assert.equal(chat.daemonPid, undefined);
  assert.ok(!view.posted.some((m) => m.type === "daemonExited"));
  assert.ok(view.posted.some((m) => m.type === "say" && /restarts with your next message, and resumes this session/.test(m.text)));
  assert.equal((await send(view, "!echo two")).last.reply, "two");
  assert.notEqual(chat.daemonPid, pid);
  assert.equal(chat.sessionId, first);
  assert.ok((await chat.context()).some((m) => m.content === "!echo one"));
});

withChat("changing elelem.command offers a restart that uses it", async ({ view, chat }) => {
  await send(view, "!echo one");
  const pid = chat.daemonPid;
  fake.answers.push((kind, choices) => choices[0]);
  fake.changeSettings({ "elelem.env": { ...fake.settings["elelem.env"], ELELEM_LOG_LEVEL: "debug" } });
  await until(() => !alive(pid), 5000);
  assert.match(fake.messages[0][1], /command line or environment changed/);
  fake.changeSettings({ "elelem.model": "other" }); // not the daemon's: no question
  assert.equal(fake.messages.length, 1);
  assert.equal((await send(view, "!echo two")).last.reply, "two");
});

withChat("New Session clears the panel and starts another session", async ({ view, chat }) => {
  await send(view, "!echo hi");
  const first = chat.sessionId;
  const from = view.posted.length;
  view.receive({ type: "newSession" });
  const session = await waitFor(view, { type: "session" }, { from });
  assert.notEqual(session.sessionId, first);
  assert.ok(view.posted.slice(from).some((m) => m.type === "clear"));
});

withChat("a reopened view replays the transcript", async ({ view }) => {
  await send(view, "!stream 3");
  const from = view.posted.length;
  view.receive({ type: "ready" });
  await waitFor(view, { type: "busy" }, { from });
  const replay = view.posted.slice(from);
  // the replay ends with the log at its end (issue 40: a reloaded chat opens at its last message)
  assert.deepEqual(types(replay), ["clear", "session", "user", "thinking", "saying", "turnEnd", "busy", "scrollEnd"]);
  assert.equal(replay.find((m) => m.type === "saying").text, "tok0 tok1 tok2 ");
});

withChat("a command line that cannot start says which setting to fix; the prompt is kept for a retry", async ({ view }) => {
  const { last, posted } = await send(view, "!echo my first prompt");
  assert.equal(last.type, "error");
  assert.match(last.text, /Could not start the elelem daemon \(\/nonexistent\/elelem daemon\): .*ENOENT.*elelem\.command/);
  assert.deepEqual(posted.filter((m) => m.type === "unsent"), [{ type: "unsent", text: "!echo my first prompt" }]);
  assert.ok(!posted.some((m) => m.type === "user"), "not shown as sent");
  // the user fixes the setting and sends it again
  fake.settings["elelem.command"] = daemonCommand();
  const retry = await send(view, "!echo my first prompt");
  assert.equal(retry.last.reply, "my first prompt");
  assert.ok(!retry.posted.some((m) => m.type === "unsent"));
}, { "elelem.command": "/nonexistent/elelem daemon" });

withChat("a command sent while a turn runs is refused and given back (a prompt is a steer: steer.test.js)", async ({ view, chat }) => {
  const from = view.posted.length;
  view.receive({ type: "send", text: "!stream 300 20" });
  await waitFor(view, { type: "saying" }, { from });
  await chat.send("/tools");
  const refused = view.posted.slice(from);
  assert.ok(refused.some((m) => m.type === "error" && /still running: a command waits/.test(m.text)));
  assert.deepEqual(refused.filter((m) => m.type === "unsent"), [{ type: "unsent", text: "/tools" }]);
  view.receive({ type: "stop" });
  await waitFor(view, { type: "turnEnd" }, { from });
});

withChat("a daemon that exits at startup shows its stderr", async ({ view }) => {
  const { last } = await send(view, "hello");
  assert.equal(last.type, "error");
  assert.match(last.text, /exited during startup:\nboom/);
}, { "elelem.command": `${JSON.stringify(process.execPath)} -e "console.error('boom'); process.exit(3)"` });

withChat("a bad setting is a clear error", async ({ view }) => {
  const { last } = await send(view, "hello");
  assert.equal(last.type, "error");
  assert.match(last.text, /elelem.command: unterminated " quote/);
}, { "elelem.command": 'python "-m elelem_daemon' });

withChat("an unknown provider is reported", async ({ view }) => {
  const { last } = await send(view, "hello");
  assert.equal(last.type, "error");
  assert.match(last.text, /nosuch/);
}, { "elelem.provider": "nosuch" });

// Workspace trust: a project plugin adds the /marker command only in a trusted workspace.
function pluginWorkspace() {
  const ws = workspace();
  fs.mkdirSync(path.join(ws, ".agents/plugins"), { recursive: true });
  fs.writeFileSync(
    path.join(ws, ".agents/plugins/marker.py"),
    'def register(plugin):\n    @plugin.command("marker", "project plugin loaded")\n    def marker(session, args):\n        session.output.say("marked")\n',
  );
  return ws;
}

withChat("a trusted workspace loads the project's plugins", async ({ view }) => {
  const { posted } = await send(view, "!echo hi");
  const session = posted.find((m) => m.type === "session");
  assert.equal(session.trusted, true);
  assert.ok(session.commands.some((c) => c.name === "marker"));
}, {}, { workspace: pluginWorkspace(), trusted: true });

withChat("an untrusted workspace tells the daemon, which skips project plugins", async ({ view }) => {
  const { posted } = await send(view, "!echo hi");
  const session = posted.find((m) => m.type === "session");
  assert.equal(session.trusted, false);
  assert.ok(!session.commands.some((c) => c.name === "marker"));
  assert.match((await send(view, "/marker")).last.output, /unknown command/);
}, {}, { workspace: pluginWorkspace(), trusted: false });

withChat("elelem.prestart opens a session in the background, which the first message uses", async ({ view, chat }) => {
  const start = Date.now();
  await until(() => chat.sessionId !== undefined);
  console.log(`prestart: session ready ${Date.now() - start} ms after the chat opened (activation just before)`);
  const header = view.posted.filter((m) => m.type === "session");
  assert.equal(header.length, 1, "the panel shows the session before any message");
  const id = chat.sessionId;
  const { last, posted } = await send(view, "!echo hi");
  assert.equal(last.reply, "hi");
  assert.equal(chat.sessionId, id, "the prestarted session, not a second one");
  assert.ok(!posted.some((m) => m.type === "session"), "no new session header");
}, { "elelem.prestart": true });

const remembering = (sessionId) => {
  const { Memento } = require("./helpers");
  const memory = new Memento();
  memory.values.set("elelem.sessionId", sessionId);
  return memory;
};

withChat("elelem.prestart with a remembered session starts only the daemon; the view restores", async ({ view, chat, context }) => {
  await until(() => chat.daemonPid !== undefined);
  view.receive({ type: "ready" }); // the panel asks for its session back
  await until(() => context.workspaceState.get("elelem.sessionId") === undefined); // never stored
  assert.equal(chat.sessionId, undefined, "prestart opened no session of its own");
  assert.ok(!view.posted.some((m) => m.type === "session"));
  const { last } = await send(view, "!echo hi");
  assert.equal(last.reply, "hi");
}, { "elelem.prestart": true }, { workspaceState: remembering("0123456789abcdef") });
