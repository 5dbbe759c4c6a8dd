// Issue 29: when the session opens, the chat says what the workspace's own plugins, rules,
// skills and MCP servers are: the daemon's `trust.loads`, against the real daemon. Trust
// itself stays VS Code's workspace trust.
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("fs");
const path = require("path");
const { activate, deactivate, send, workspace } = require("./helpers");

function projectWorkspace() {
  const ws = workspace();
  fs.mkdirSync(path.join(ws, ".agents/plugins"), { recursive: true });
  fs.writeFileSync(
    path.join(ws, ".agents/plugins/marker.py"),
    'def register(plugin):\n    @plugin.command("marker", "project plugin loaded")\n    def marker(session, args):\n        session.output.say("marked")\n',
  );
  fs.writeFileSync(
    path.join(ws, ".mcp.json"),
    JSON.stringify({ mcpServers: { tools: { command: "elelem-no-such-server", args: ["--api-key", "sekrit-value-123"] } } }),
  );
  return ws;
}

function trustLines(posted) {
  return posted.filter((m) => m.type === "say" && /workspace/.test(m.text ?? "")).map((m) => m.text);
}

test("an untrusted workspace: one line lists what was not loaded and that trusting would load it", async () => {
  const env = await activate({}, { workspace: projectWorkspace(), trusted: false });
  try {
    const { posted } = await send(env.view, "!echo hi");
    const lines = trustLines(posted);
    assert.equal(lines.length, 1, JSON.stringify(posted));
    assert.match(lines[0], /^The workspace is not trusted, so this was not loaded: /);
    assert.ok(lines[0].includes("plugin (Python code that runs in the session): .agents/plugins/marker.py"), lines[0]);
    assert.ok(lines[0].includes("elelem-no-such-server --api-key ***"), lines[0]);
    assert.ok(!lines[0].includes("sekrit"), lines[0]);
    assert.match(lines[0], /Trusting the workspace .* would load it/);
    assert.ok(!posted.find((m) => m.type === "session").commands.some((c) => c.name === "marker"));
  } finally {
    await deactivate(env.context);
  }
});

test("a trusted workspace, or one with nothing of its own: no trust line", async () => {
  for (const [ws, trusted] of [[projectWorkspace(), true], [workspace(), false]]) {
    const env = await activate({}, { workspace: ws, trusted });
    try {
      const { posted } = await send(env.view, "!echo hi");
      assert.deepEqual(trustLines(posted), []);
    } finally {
      await deactivate(env.context);
    }
  }
});
