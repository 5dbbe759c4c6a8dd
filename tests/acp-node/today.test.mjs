// Today's ACP (issue 38) with the official TypeScript SDK 2.4.0: a prompt's title, session/delete,
// an appended systemPrompt seen by a recording fake provider, and session/fork loaded in a new
// process (fork and systemPrompt are the SDK's unstable entry point).

import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { Editor, acp, newSession, prompt, unstable, withDaemon } from "./editor.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const STREAM = readFileSync(path.join(here, "..", "providers", "streams", "openai_text.sse"));

function stored(home, sessionId) {
  return path.join(home, ".local", "state", "elelem", "sessions", `${sessionId}.jsonl`);
}

// An OpenAI-compatible server on 127.0.0.1 that records each chat request and streams a reply.
async function recordingServer() {
  const requests = [];
  const server = createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      if (req.method !== "POST") {
        res.writeHead(404).end();
        return;
      }
      requests.push(Buffer.concat(chunks));
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end(STREAM);
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { requests, url: `http://127.0.0.1:${server.address().port}`, server };
}

test("a prompt gives the session a title (session_info_update)", async () => {
  const editor = new Editor();
  await withDaemon(editor, async (ctx, _init, project) => {
    const { sessionId } = await newSession(ctx, project);
    await prompt(ctx, sessionId, "Fix the parser\nand its tests");
    const [info] = editor.of("session_info_update");
    assert.equal(info.title, "Fix the parser");
    assert.ok(info.updatedAt);
    const chunk = editor.of("agent_message_chunk")[0];
    assert.equal(typeof chunk.messageId, "string");
  });
});

test("session/delete removes the session from session/list and from the disk", async () => {
  const home = mkdtempSync(path.join(tmpdir(), "elelem-acp-home-"));
  await withDaemon(new Editor(), async (ctx, init, project) => {
    assert.deepEqual(init.agentCapabilities.sessionCapabilities.delete, {});
    const { sessionId } = await newSession(ctx, project);
    await prompt(ctx, sessionId, "!echo soon gone");
    assert.ok(existsSync(stored(home, sessionId)));
    await ctx.request(acp.methods.agent.session.delete, { sessionId });
    const listed = await ctx.request(acp.methods.agent.session.list, {});
    assert.deepEqual(listed.sessions, []);
    assert.equal(existsSync(stored(home, sessionId)), false);
    // elelem answers -32002 (unknown_session), which the SDK takes as a successful delete
    assert.deepEqual(await ctx.request(acp.methods.agent.session.delete, { sessionId }), {});
    await assert.rejects(
      ctx.request(acp.methods.agent.session.load, { sessionId, cwd: project, mcpServers: [] }),
      (error) => error.code === -32002 && error.data.kind === "unknown_session",
    );
  }, { home });
});

test("an appended systemPrompt reaches the model after an unchanged prefix", async () => {
  const { requests, url, server } = await recordingServer();
  const rules = "CLIENT RULES: answer in French.";
  try {
    const env = { ELELEM_PROVIDER: "openai", OPENAI_BASE_URL: `${url}/v1`, OPENAI_MODEL: "smol" };
    await withDaemon(new Editor({ unstable: true }), async (ctx, init, project) => {
      assert.deepEqual(init.agentCapabilities.sessionCapabilities.systemPrompt, {
        mode: { override: {} },
      });
      const plain = await newSession(ctx, project);
      const appended = await ctx.request(unstable.methods.agent.session.new, {
        cwd: project,
        mcpServers: [],
        systemPrompt: { mode: "append", content: [{ type: "text", text: rules }] },
      });
      await prompt(ctx, plain.sessionId, "hi");
      await prompt(ctx, appended.sessionId, "hi");
      await prompt(ctx, appended.sessionId, "hi again");
    }, { env });
  } finally {
    server.close();
  }
  const systems = requests.map((body) => JSON.parse(body).messages[0].content);
  assert.equal(systems.length, 3);
  const [base, first, second] = systems;
  assert.equal(first, `${base}\n\n${rules}`);
  assert.equal(second, first); // byte-stable across the session's requests
  const sent = requests.map((body) => body.subarray(body.indexOf('"messages"')));
  const prefix = Buffer.from(JSON.stringify(base).slice(0, -1)); // without its closing quote
  const end = sent[0].indexOf(prefix) + prefix.length;
  assert.ok(end > prefix.length);
  assert.ok(sent[0].subarray(0, end).equals(sent[1].subarray(0, end)));
});

test("session/fork gives a session with the same history that loads in a new process", async () => {
  const home = mkdtempSync(path.join(tmpdir(), "elelem-acp-home-"));
  let fork;
  let project;
  await withDaemon(new Editor({ unstable: true }), async (ctx, init, cwd) => {
    project = cwd;
    assert.deepEqual(init.agentCapabilities.sessionCapabilities.fork, {});
    const { sessionId } = await newSession(ctx, cwd);
    await prompt(ctx, sessionId, "!echo before the fork");
    const forked = await ctx.request(unstable.methods.agent.session.fork, {
      sessionId,
      cwd,
      mcpServers: [],
    });
    fork = forked.sessionId;
    assert.notEqual(fork, sessionId);
    assert.equal(forked.modes.currentModeId, "build");
    const listed = await ctx.request(unstable.methods.agent.session.list, {});
    assert.deepEqual(new Set(listed.sessions.map((s) => s.sessionId)), new Set([sessionId, fork]));
  }, { home });
  const editor = new Editor({ unstable: true });
  await withDaemon(editor, async (ctx) => {
    await ctx.request(unstable.methods.agent.session.load, {
      sessionId: fork,
      cwd: project,
      mcpServers: [],
    });
    const replayed = editor.of("user_message_chunk").map((u) => u.content.text);
    assert.deepEqual(replayed, ["!echo before the fork"]);
    assert.equal((await prompt(ctx, fork, "!echo after")).stopReason, "end_turn");
  }, { home });
});
