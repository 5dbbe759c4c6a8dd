// Issue 20 through the real daemon (stub provider): the mode in the chat's header and its
// picker (session/setMode, event/mode), the todo tool's plan (event/plan), and the plan
// redrawn when a session is reopened (session/load's plan).
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const { vscode, fake, activate, deactivate, waitFor, send, Memento, workspace } = require("./helpers");

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

const todo = (...statuses) =>
  `!tool todo ${JSON.stringify({ todos: statuses.map((status, i) => ({ content: `step ${i + 1}`, status })) })}`;

withChat("the header has the session's mode; the picker sets another (session/setMode), event/mode follows", async ({ view }) => {
  const { posted } = await send(view, "!echo hi");
  const session = posted.find((m) => m.type === "session");
  assert.equal(session.mode.current, "build");
  assert.deepEqual(session.mode.available.slice(0, 4).map((m) => m.id), ["build", "plan", "review", "verify"]);
  let offered;
  fake.answers.push((kind, items) => {
    offered = items;
    return items.find((i) => i.id === "plan");
  });
  const from = view.posted.length;
  view.receive({ type: "pickMode" });
  const shown = await waitFor(view, (m) => m.type === "mode" && m.mode.current === "plan", { from });
  assert.equal(shown.mode.current, "plan");
  assert.equal(offered.find((i) => i.id === "build").description, "(current)");
  assert.ok(offered.every((i) => i.detail), "each mode has its description");
  // plan mode refuses write: the model reads why
  const { posted: turn } = await send(view, '!tool write {"path":"x.txt","content":"x"}');
  assert.match(turn.find((m) => m.type === "result").result.error, /write is not allowed in plan mode/);
  // /mode typed in the chat: event/mode reaches the header too
  const { posted: command } = await send(view, "/mode build");
  assert.ok(command.some((m) => m.type === "mode" && m.mode.current === "build"), JSON.stringify(command.map((m) => m.type)));
});

test("the todo tool's plan reaches the chat, and a reopened session redraws the last one", async () => {
  const ws = workspace();
  const workspaceState = new Memento();
  let env = await activate({}, { workspace: ws, workspaceState });
  try {
    const { posted } = await send(env.view, todo("in_progress", "pending"));
    const plan = posted.find((m) => m.type === "plan");
    assert.deepEqual(plan.entries, [{ content: "step 1", status: "in_progress" }, { content: "step 2", status: "pending" }]);
    assert.ok(posted.indexOf(plan) < posted.findIndex((m) => m.type === "result"));
    await send(env.view, todo("completed", "in_progress"));
  } finally {
    await deactivate(env.context);
  }
  env = await activate({}, { workspace: ws, workspaceState });
  try {
    const history = await waitFor(env.view, { type: "history" });
    const plan = await waitFor(env.view, { type: "plan" });
    assert.ok(env.view.posted.indexOf(history) < env.view.posted.indexOf(plan));
    assert.deepEqual(plan.entries.map((e) => e.status), ["completed", "in_progress"]);
  } finally {
    await deactivate(env.context);
  }
});

withChat("an unknown mode is refused in words, the header unchanged", async ({ view, chat }) => {
  await send(view, "!echo hi");
  chat.session.mode.available.push({ id: "gone", name: "Gone" });
  fake.answers.push((kind, items) => items.find((i) => i.id === "gone"));
  const from = view.posted.length;
  view.receive({ type: "pickMode" });
  const error = await waitFor(view, { type: "error" }, { from });
  assert.match(error.text, /unknown_mode/);
  assert.ok(!view.posted.slice(from).some((m) => m.type === "mode"));
});
