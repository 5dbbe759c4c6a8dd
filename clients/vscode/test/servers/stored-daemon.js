// A small scripted daemon for what the real one may not have yet: stored sessions
// (`session/list` stored entries, `session/load`, protocol.md draft for issue 8) and
// permission questions. It logs the `initialize` params to stderr.
"use strict";
const { createMessageConnection, StreamMessageReader, StreamMessageWriter } = require("vscode-jsonrpc/node");

const connection = createMessageConnection(new StreamMessageReader(process.stdin), new StreamMessageWriter(process.stdout));
const commands = [{ name: "help", description: "Show available commands" }];
const info = (sessionId) => ({ sessionId, cwd: process.cwd(), provider: "stub", model: "stub", tools: [], commands });
const stored = [
  { sessionId: "older", cwd: process.cwd(), title: "Older talk", updatedAt: "2026-01-01T10:00:00Z", stored: true },
  { sessionId: "newest", cwd: process.cwd(), title: "Fix the parser", updatedAt: "2026-03-01T10:00:00Z", stored: true },
];
let count = 0;

connection.onRequest("initialize", (params) => {
  console.error(`initialize ${JSON.stringify(params)}`);
  return { serverInfo: { name: "stored-daemon", version: "0" }, capabilities: { cancel: true, inputAsk: true } };
});
connection.onRequest("shutdown", () => null);
connection.onNotification("exit", () => process.exit(0));
connection.onRequest("session/new", () => info(`new-${++count}`));
const closed = [];
connection.onRequest("session/list", () => ({ sessions: stored, closed }));
connection.onRequest("session/close", ({ sessionId }) => {
  closed.push(sessionId);
  return {};
});
connection.onRequest("session/load", ({ sessionId }) => ({
  ...info(sessionId),
  messages: [
    { role: "user", content: `question in ${sessionId}` },
    { role: "assistant", content: `**answer** in ${sessionId}` },
  ],
}));
connection.onRequest("session/turn", async ({ sessionId, text }) => {
  if (text === "!permission") {
    const answer = await connection.sendRequest("input/ask", {
      sessionId,
      kind: "permission",
      prompt: "Run `rm -rf build`?",
      tool: { name: "execute", arguments: { command: "rm -rf build" } },
      options: ["allow", "deny", "always", "never", "later"],
    });
    return { reply: `answer: ${JSON.stringify(answer)}`, stopReason: "end_turn", turnId: 1 };
  }
  return { reply: `${sessionId}: ${text}`, stopReason: "end_turn", turnId: 1 };
});
process.stdin.on("end", () => process.exit(0));
connection.listen();
