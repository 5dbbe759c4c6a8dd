// Issue 19 through the real daemon: elelem.mcpServers on session/new (a real stdio MCP
// server from tests/mcp/servers, on the SDK's server API), its status in the chat, a bad
// entry named, and the OAuth step (input/ask kind authorize) against a real OAuth server:
// the browser offer opens the URL, and is withdrawn when the server no longer needs it.
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("fs");
const net = require("net");
const os = require("os");
const path = require("path");
const { spawn } = require("child_process");
const { vscode, fake, activate, deactivate, waitFor, send, REPO } = require("./helpers");

const PYTHON = path.join(REPO, ".venv/bin/python");
const SERVERS = path.join(REPO, "tests/mcp/servers");

function withChat(name, body, settings, options) {
  test(name, { timeout: 180_000 }, async () => {
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

const serverState = (name, state) => (m) => m.type === "mcp" && m.mcp.servers.some((s) => s.name === name && s.state === state);

withChat("elelem.mcpServers starts a stdio server: its status reaches the chat, its tools run; a bad entry is named", async ({ view }) => {
  const { posted } = await send(view, "!echo hi");
  const first = posted.find((m) => m.type === "mcp");
  assert.ok(first, "session/new's mcp status was shown");
  assert.ok(first.mcp.problems.some((p) => /broken/.test(p)), JSON.stringify(first.mcp.problems));
  const ready = await waitFor(view, serverState("demo", "ready"), { timeout: 60_000 });
  const demo = ready.mcp.servers.find((s) => s.name === "demo");
  assert.equal(demo.source, "client");
  assert.ok(demo.tools.includes("demo__add"), JSON.stringify(demo.tools));
  fake.answers.push((kind, items) => items.find((i) => i.answer === "allow"));
  const { posted: call } = await send(view, '!tool demo__add {"a": 2, "b": 3}');
  const result = call.find((m) => m.type === "result");
  assert.equal(result.ok, true, JSON.stringify(result));
  assert.match(JSON.stringify(result.result), /5/);
}, { "elelem.mcpServers": { demo: { command: PYTHON, args: [path.join(SERVERS, "demo.py")] }, broken: { command: 7 } }, "elelem.askInChat": false });

withChat("after Undo Last Turn the header's MCP state is the current one, not session/new's (issue 31)", async ({ view }) => {
  await send(view, "!echo hi");
  await waitFor(view, serverState("demo", "ready"), { timeout: 60_000 });
  await send(view, "!echo again");
  fake.answers.push(() => "Restore");
  await vscode.commands.executeCommand("elelem.undoLastTurn");
  await waitFor(view, (m) => m.type === "say" && /^Rewound/.test(m.text));
  const redrawn = view.posted.slice(view.posted.map((m) => m.type).lastIndexOf("clear"));
  const mcp = redrawn.filter((m) => m.type === "mcp").at(-1);
  assert.equal(mcp.mcp.servers.find((s) => s.name === "demo").state, "ready", JSON.stringify(mcp));
  assert.deepEqual(redrawn.filter((m) => m.type === "user").map((m) => m.text), ["!echo hi"]);
}, { "elelem.mcpServers": { demo: { command: PYTHON, args: [path.join(SERVERS, "demo.py")] } } });

function freePort() {
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

async function listening(port) {
  for (let i = 0; i < 300; i++) {
    const ok = await new Promise((resolve) => {
      const socket = net.connect(port, "127.0.0.1", () => (socket.end(), resolve(true)));
      socket.on("error", () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`nothing listens on ${port}`);
}

test("an MCP server's OAuth step: the offer opens the URL; after approval the offer is withdrawn", { timeout: 180_000 }, async () => {
  const port = await freePort();
  // MARKS: where the server counts the codes it issued (a scratch folder, not the cwd)
  const marks = fs.mkdtempSync(path.join(os.tmpdir(), "elelem-mcp-marks-"));
  const server = spawn(PYTHON, [path.join(SERVERS, "authed.py"), String(port)], { stdio: "ignore", cwd: marks, env: { ...process.env, MARKS: marks } });
  try {
    await listening(port);
    const env = await activate({ "elelem.mcpServers": { secure: { type: "http", url: `http://127.0.0.1:${port}/mcp` } } });
    try {
      // The user looks at the offer and does not click it: approving happens in "the browser"
      // (this test), and the daemon withdraws the offer once the server is ready.
      let offered;
      fake.answers.push((kind, items, options) => {
        offered = { kind, items, options };
        return new Promise(() => {}); // never clicked
      });
      const original = fake.asked.length;
      await send(env.view, "!echo hi");
      for (let i = 0; i < 600 && !offered; i++) await new Promise((r) => setTimeout(r, 100));
      assert.ok(offered, "no authorize question");
      assert.equal(offered.kind, "pick");
      assert.match(offered.options.title, /MCP server secure needs your approval/);
      const url = offered.items[0].description;
      assert.ok(url.startsWith(`http://127.0.0.1:${port}/authorize?`), url);
      assert.equal(fake.asked.length, original + 1);
      const answer = await fetch(url, { redirect: "follow" });
      assert.equal(answer.status, 200);
      await waitFor(env.view, serverState("secure", "ready"), { timeout: 60_000 });
      const asked = fake.asked.at(-1);
      for (let i = 0; i < 300 && !asked.token.isCancellationRequested; i++) await new Promise((r) => setTimeout(r, 100));
      assert.equal(asked.token.isCancellationRequested, true, "the daemon withdrew the offer ($/cancelRequest): the quick pick closes");
      assert.equal(fake.opened.length, 0, "nothing was opened: the user did not click");
    } finally {
      await deactivate(env.context);
    }
  } finally {
    server.kill();
  }
});

test("authorize: clicking the offer opens the URL with vscode.env.openExternal; a withdrawn offer opens nothing", async () => {
  require("./helpers");
  const { askUser } = require("../dist/lib/input.js");
  const { vscode } = require("./helpers");
  fake.reset();
  const token = () => new vscode.CancellationTokenSource();
  fake.answers.push((kind, items) => items[0]);
  const params = { sessionId: "s", turnId: null, kind: "authorize", prompt: "Approve secure", options: ["open"], server: "secure", url: "http://127.0.0.1:1/authorize?x=1" };
  assert.equal(await askUser(params, token().token), "open");
  assert.deepEqual(fake.opened, ["http://127.0.0.1:1/authorize?x=1"]);
  fake.answers.push((kind, items) => items[0]);
  assert.equal(await askUser({ ...params, url: "file:///etc/passwd" }, token().token), "open");
  assert.equal(fake.opened.length, 1, "only http(s) URLs are opened");
  const source = token();
  fake.answers.push(() => new Promise(() => {}));
  const pending = askUser(params, source.token);
  source.cancel();
  assert.equal(await pending, undefined);
  assert.equal(fake.opened.length, 1);
});
