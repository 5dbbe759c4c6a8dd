// Stored sessions and permission questions against the real daemon (protocol.md: Stored
// sessions, Permissions).
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("fs");
const os = require("os");
const path = require("path");
const { spawn } = require("child_process");
const { createMessageConnection, StreamMessageReader, StreamMessageWriter } = require("vscode-jsonrpc/node");
const { vscode, fake, activate, deactivate, waitFor, send, until, workspace, daemonCommand, Memento, DAEMON_ENV } = require("./helpers");

/** Talk in one folder, then close the window: returns the session id and the window's state. */
async function talkThenClose(ws, text) {
  const workspaceState = new Memento();
  const env = await activate({}, { workspace: ws, workspaceState });
  try {
    await send(env.view, text);
    return { sessionId: env.chat.sessionId, workspaceState };
  } finally {
    await deactivate(env.context);
  }
}

test("a window reload reopens the session the panel showed, with its history", async () => {
  const ws = workspace();
  const { sessionId, workspaceState } = await talkThenClose(ws, "!echo remember the tulips");
  const env = await activate({}, { workspace: ws, workspaceState });
  try {
    const { view, chat } = env;
    const history = await waitFor(view, { type: "history" });
    assert.equal(chat.sessionId, sessionId);
    assert.equal(view.posted.find((m) => m.type === "session").sessionId, sessionId);
    assert.deepEqual(
      history.messages.map((m) => [m.role, m.content]),
      [["user", "!echo remember the tulips"], ["assistant", "remember the tulips"]],
    );
    assert.ok(!view.posted.some((m) => m.type === "error"));
    assert.equal((await send(view, "!echo more")).last.reply, "more");
    assert.equal(chat.sessionId, sessionId, "the next message goes on in it");
    assert.ok((await chat.context()).some((m) => m.content === "remember the tulips"));
  } finally {
    await deactivate(env.context);
  }
});

test("a reload whose session was never stored starts nothing and says nothing", async () => {
  const ws = workspace();
  const workspaceState = new Memento();
  let env = await activate({}, { workspace: ws, workspaceState });
  try {
    env.view.receive({ type: "newSession" }); // a session, but nothing said in it
    await waitFor(env.view, { type: "session" });
    assert.ok(workspaceState.get("elelem.sessionId"));
  } finally {
    await deactivate(env.context);
  }
  env = await activate({}, { workspace: ws, workspaceState });
  try {
    await until(() => workspaceState.get("elelem.sessionId") === undefined);
    assert.ok(!env.view.posted.some((m) => ["error", "history", "say"].includes(m.type)), JSON.stringify(env.view.posted));
    const { posted } = await send(env.view, "!echo hi");
    assert.ok(posted.some((m) => m.type === "session"));
  } finally {
    await deactivate(env.context);
  }
});

test("a reload waits while the old daemon still holds the session's lock", async () => {
  const ws = workspace();
  const { sessionId, workspaceState } = await talkThenClose(ws, "!echo held");
  // Another daemon (the old window's, still exiting) has the session open.
  const holder = spawn("sh", ["-c", `exec ${daemonCommand()}`], { cwd: ws, env: { ...process.env, ...DAEMON_ENV }, stdio: ["pipe", "pipe", "inherit"] });
  const rpc = createMessageConnection(new StreamMessageReader(holder.stdout), new StreamMessageWriter(holder.stdin));
  rpc.listen();
  await rpc.sendRequest("initialize", {});
  await rpc.sendRequest("session/load", { sessionId });
  const env = await activate({}, { workspace: ws, workspaceState });
  try {
    await until(() => fake.logLines.some((l) => /starting the daemon/.test(l)));
    await new Promise((resolve) => setTimeout(resolve, 700));
    assert.ok(!env.view.posted.some((m) => m.type === "history" || m.type === "error"), "still waiting");
    holder.kill("SIGKILL");
    const history = await waitFor(env.view, { type: "history" });
    assert.equal(history.messages[0].content, "!echo held");
    assert.equal(env.chat.sessionId, sessionId);
  } finally {
    holder.kill("SIGKILL");
    rpc.dispose();
    await deactivate(env.context);
  }
});

test("Resume Last Session reopens the conversation after a restart", async () => {
  const ws = workspace();
  let env = await activate({}, { workspace: ws });
  let first;
  try {
    await send(env.view, "!echo remember the tulips");
    first = env.chat.sessionId;
  } finally {
    await deactivate(env.context);
  }
  env = await activate({}, { workspace: ws });
  try {
    const { view, chat } = env;
    await vscode.commands.executeCommand("elelem.resumeLastSession");
    const history = await waitFor(view, { type: "history" });
    assert.equal(chat.sessionId, first);
    assert.deepEqual(
      history.messages.map((m) => [m.role, m.content]),
      [["user", "!echo remember the tulips"], ["assistant", "remember the tulips"]],
    );
    const context = await chat.context();
    assert.ok(context.some((m) => m.content === "remember the tulips"), "the model sees it again");
    await send(view, "!echo more");
  } finally {
    await deactivate(env.context);
  }
});

test("Open Session… offers this folder's stored sessions by title, newest first", async () => {
  const ws = workspace();
  let env = await activate({}, { workspace: ws });
  try {
    await send(env.view, "!echo first talk");
    env.view.receive({ type: "newSession" });
    await waitFor(env.view, (m) => m.type === "session" && m.sessionId !== undefined, { from: env.view.posted.length });
    await send(env.view, "!echo second talk");
  } finally {
    await deactivate(env.context);
  }
  env = await activate({}, { workspace: ws });
  try {
    fake.answers.push((kind, items) => items.find((i) => i.label === "!echo first talk"));
    await vscode.commands.executeCommand("elelem.openSession");
    const labels = fake.asked[0].what.map((i) => i.label);
    assert.deepEqual(labels, ["!echo second talk", "!echo first talk"]);
    const history = await waitFor(env.view, { type: "history" });
    assert.equal(history.messages[0].content, "!echo first talk");
  } finally {
    await deactivate(env.context);
  }
});

test("a tool that needs permission asks with a quick pick; deny is what the model reads", async () => {
  const config = fs.mkdtempSync(path.join(os.tmpdir(), "elelem-vscode-config-")); // default rules: execute asks
  const env = await activate({ "elelem.env": { ...DAEMON_ENV, XDG_CONFIG_HOME: config }, "elelem.askInChat": false });
  try {
    fake.answers.push((kind, items) => items.find((i) => i.answer === "deny"));
    const { posted } = await send(env.view, '!tool execute {"command":"echo hi"}');
    const [asked] = fake.asked;
    assert.equal(asked.options.title, "Elelem wants to run execute");
    assert.match(asked.what.find((i) => i.answer === "allow").detail, /echo hi/);
    // every option the daemon sends has a label and a description, none a bare answer
    assert.deepEqual(asked.what.map((i) => i.answer), ["allow", "deny", "always", "never"]);
    assert.deepEqual(asked.what.map((i) => i.label), ["$(check) Allow", "$(close) Deny", "$(check-all) Always allow", "$(circle-slash) Never allow"]);
    for (const item of asked.what) assert.ok(item.description && item.description.length > 8, JSON.stringify(item));
    assert.match(asked.what.find((i) => i.answer === "never").description, /deny this and every later execute call in this session/);
    const ask = posted.find((m) => m.type === "ask");
    assert.equal(ask.kind, "permission");
    assert.deepEqual(ask.tool.arguments, { command: "echo hi" });
    const result = posted.find((m) => m.type === "result");
    assert.equal(result.ok, false);
    assert.match(result.result.error, /User denied permission: execute/);

    fake.answers.push((kind, items) => items.find((i) => i.answer === "always"));
    const allowed = await send(env.view, '!tool execute {"command":"echo hi"}');
    assert.equal(allowed.posted.find((m) => m.type === "result").ok, true);
    const again = await send(env.view, '!tool execute {"command":"echo again"}');
    assert.equal(again.posted.find((m) => m.type === "result").ok, true);
    assert.equal(fake.asked.length, 2, "always: no third question");
  } finally {
    await deactivate(env.context);
  }
});

test("a reload redraws a history longer than one page, every page fetched (session/history)", async () => {
  const ws = workspace();
  const pad = "p".repeat(150000); // each turn ~300 KB: the history spans pages of ~256 KB
  const workspaceState = new Memento();
  let env = await activate({}, { workspace: ws, workspaceState });
  let sessionId;
  try {
    for (const n of [1, 2, 3]) await send(env.view, `!echo turn ${n} ${pad}`);
    sessionId = env.chat.sessionId;
  } finally {
    await deactivate(env.context);
  }
  env = await activate({}, { workspace: ws, workspaceState });
  try {
    const history = await waitFor(env.view, { type: "history" });
    assert.equal(env.chat.sessionId, sessionId);
    assert.deepEqual(
      history.messages.filter((m) => m.role === "user").map((m) => m.content.slice(0, 13)),
      ["!echo turn 1 ", "!echo turn 2 ", "!echo turn 3 "],
    );
  } finally {
    await deactivate(env.context);
  }
});
