// Stored sessions and permission questions against the real daemon (protocol.md: Stored
// sessions, Permissions).
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("fs");
const os = require("os");
const path = require("path");
const { vscode, fake, activate, deactivate, waitFor, send, workspace, DAEMON_ENV } = require("./helpers");

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
  const env = await activate({ "elelem.env": { ...DAEMON_ENV, XDG_CONFIG_HOME: config } });
  try {
    fake.answers.push((kind, items) => items.find((i) => i.answer === "deny"));
    const { posted } = await send(env.view, '!tool execute {"command":"echo hi"}');
    const [asked] = fake.asked;
    assert.equal(asked.options.title, "Elelem wants to run execute");
    assert.match(asked.what.find((i) => i.answer === "allow").detail, /echo hi/);
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
