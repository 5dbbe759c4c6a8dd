// Conformance: the official TypeScript ACP client against the real `elelem daemon --acp`.

import assert from "node:assert/strict";
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";
import { Editor, acp, newSession, prompt, withDaemon } from "./editor.mjs";

const other = (u) => u.sessionUpdate !== "available_commands_update";

test("initialize negotiates protocol version 1", async () => {
  const editor = new Editor();
  await withDaemon(editor, async (ctx, init) => {
    assert.equal(init.protocolVersion, 1);
    assert.equal(init.agentInfo.name, "elelem");
    assert.equal(init.agentCapabilities.promptCapabilities.embeddedContext, true);
    const newer = await ctx.request(acp.methods.agent.initialize, { protocolVersion: 9 });
    assert.equal(newer.protocolVersion, 1);
  });
});

test("a streamed prompt with a tool call", async () => {
  const editor = new Editor({ answers: ["allow"] }); // execute asks by default
  await withDaemon(editor, async (ctx, _init, project) => {
    const { sessionId } = await newSession(ctx, project);
    const streamed = await prompt(ctx, sessionId, "!stream 4");
    assert.equal(streamed.stopReason, "end_turn");
    assert.equal(editor.said(), "tok0 tok1 tok2 tok3 ");
    editor.updates.length = 0;
    const answer = await prompt(ctx, sessionId, '!tool execute {"command":"echo hi"}');
    assert.equal(answer.stopReason, "end_turn");
  });
  const kinds = editor.updates.map((n) => n.update).filter(other).map((u) => u.sessionUpdate);
  assert.deepEqual(kinds, [
    "agent_thought_chunk", "agent_message_chunk", "tool_call", "tool_call_update",
    "agent_thought_chunk", "agent_message_chunk",
  ]);
  const [call] = editor.of("tool_call");
  const [done] = editor.of("tool_call_update");
  assert.equal(call.kind, "execute");
  assert.equal(call.status, "in_progress");
  assert.deepEqual(call.rawInput, { command: "echo hi" });
  assert.equal(done.toolCallId, call.toolCallId);
  assert.equal(done.status, "completed");
  assert.deepEqual(done.rawOutput, { exit_status: 0, content: "hi\n", ok: true });
});

test("a question with choices is a permission request", async () => {
  const editor = new Editor({ answers: ["choice-1", null] });
  const ask = '!tool interview {"question":"Go on?","options":["yes","no"]}';
  await withDaemon(editor, async (ctx, _init, project) => {
    const { sessionId } = await newSession(ctx, project);
    await prompt(ctx, sessionId, ask);
    await prompt(ctx, sessionId, ask);
  });
  const [first, second] = editor.of("tool_call_update");
  assert.deepEqual(first.rawOutput, { answer: "yes", ok: true });
  assert.deepEqual(second.rawOutput, { error: "the user gave no answer", ok: false });
  assert.deepEqual(
    editor.permissions[0].options.map((o) => [o.optionId, o.name, o.kind]),
    [["choice-1", "yes", "allow_once"], ["choice-2", "no", "allow_always"]],
  );
  assert.equal(editor.permissions[0].toolCall.toolCallId, editor.of("tool_call")[0].toolCallId);
});

test("session/cancel ends the prompt with stopReason cancelled", async () => {
  const editor = new Editor({ answers: ["allow"] });
  await withDaemon(editor, async (ctx, _init, project) => {
    const marker = path.join(project, "survived");
    const { sessionId } = await newSession(ctx, project);
    const command = JSON.stringify({ command: `sleep 30 && touch ${marker}` });
    const running = prompt(ctx, sessionId, `!tool execute ${command}`);
    await editor.until(() => editor.of("tool_call").length > 0);
    await ctx.notify(acp.methods.agent.session.cancel, { sessionId });
    assert.equal((await running).stopReason, "cancelled");
    assert.equal((await prompt(ctx, sessionId, "!echo again")).stopReason, "end_turn");
    assert.equal(existsSync(marker), false);
  });
});

test("fs round trip: read, edit and write go through the editor", async () => {
  const editor = new Editor({ fs: true });
  let project;
  await withDaemon(editor, async (ctx, _init, cwd) => {
    project = cwd;
    editor.buffers.set(path.join(cwd, "buffer.txt"), "draft one\n");
    const { sessionId } = await newSession(ctx, cwd);
    await prompt(ctx, sessionId, '!tool read {"path":"buffer.txt"}');
    await prompt(ctx, sessionId, '!tool edit {"path":"buffer.txt","old":"one","new":"two"}');
    await prompt(ctx, sessionId, '!tool write {"path":"fresh.txt","content":"new"}');
  });
  const [read, edited, written] = editor.of("tool_call_update");
  assert.equal(read.rawOutput.content, "draft one\n");
  assert.equal(edited.status, "completed");
  assert.equal(written.status, "completed");
  assert.deepEqual(editor.writes, [
    [path.join(project, "buffer.txt"), "draft two\n"],
    [path.join(project, "fresh.txt"), "new"],
  ]);
  assert.equal(existsSync(path.join(project, "fresh.txt")), false);
});

test("slash commands are advertised and run from prompt text", async () => {
  const editor = new Editor();
  await withDaemon(editor, async (ctx, _init, project) => {
    const { sessionId } = await newSession(ctx, project);
    await editor.until(() => editor.of("available_commands_update").length > 0);
    const names = editor.of("available_commands_update")[0].availableCommands.map((c) => c.name);
    assert.ok(names.includes("context") && names.includes("tools"));
    await prompt(ctx, sessionId, "!echo remember me");
    editor.updates.length = 0;
    assert.equal((await prompt(ctx, sessionId, "/context")).stopReason, "end_turn");
    assert.match(editor.said(), /user: !echo remember me/);
  });
});

test("a permission request answered both ways", async () => {
  const editor = new Editor({ answers: ["allow", "deny"] });
  const echo = '!tool execute {"command":"echo hi"}';
  await withDaemon(editor, async (ctx, _init, project) => {
    const { sessionId } = await newSession(ctx, project);
    await prompt(ctx, sessionId, echo);
    await prompt(ctx, sessionId, echo);
  });
  const [allowed, denied] = editor.of("tool_call_update");
  assert.equal(allowed.status, "completed");
  assert.equal(allowed.rawOutput.content, "hi\n");
  assert.equal(denied.status, "failed");
  assert.equal(denied.rawOutput.error, "User denied permission: execute");
  const kinds = editor.permissions[0].options.map((o) => [o.optionId, o.kind]);
  assert.deepEqual(kinds, [
    ["allow", "allow_once"], ["deny", "reject_once"],
    ["always", "allow_always"], ["never", "reject_always"],
  ]);
  assert.equal(editor.permissions[0].toolCall.toolCallId, editor.of("tool_call")[0].toolCallId);
});

test("session/load replays the history; session/list finds it", async () => {
  const root = mkdtempSync(path.join(tmpdir(), "elelem-acp-home-"));
  let sessionId;
  let project;
  await withDaemon(new Editor(), async (ctx, init, cwd) => {
    assert.equal(init.agentCapabilities.loadSession, true);
    project = cwd;
    ({ sessionId } = await newSession(ctx, cwd));
    await prompt(ctx, sessionId, "!echo remembered");
  }, { home: root });
  const editor = new Editor();
  await withDaemon(editor, async (ctx) => {
    const listed = await ctx.request(acp.methods.agent.session.list, {});
    assert.deepEqual(listed.sessions.map((s) => [s.sessionId, s.title]), [[sessionId, "!echo remembered"]]);
    await ctx.request(acp.methods.agent.session.load, { sessionId, cwd: project, mcpServers: [] });
    const replayed = editor.updates
      .map((n) => n.update)
      .filter((u) => u.sessionUpdate.endsWith("message_chunk"))
      .map((u) => [u.sessionUpdate, u.content.text]);
    assert.deepEqual(replayed, [
      ["user_message_chunk", "!echo remembered"],
      ["agent_message_chunk", "remembered"],
    ]);
    assert.equal((await prompt(ctx, sessionId, "!echo more")).stopReason, "end_turn");
  }, { home: root });
});
