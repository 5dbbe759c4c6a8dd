// Issue 40 through the real daemon (stub provider): the model picker. Its entries are what
// the daemon reports for `/model ` and `/provider ` (session/complete); the choice runs that
// command in the chat and the header follows.
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const { vscode, fake, activate, deactivate, waitFor, send } = require("./helpers");

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

withChat("the header's model button lists the daemon's models and providers; a model picked runs /model NAME and the header follows", async ({ view, chat }) => {
  await send(view, "!echo hi");
  const providers = (await chat.daemon.request("session/complete", { sessionId: chat.sessionId, text: "/provider " })).items;
  assert.ok(providers.includes("stub"), JSON.stringify(providers));
  let offered;
  let options;
  fake.answers.push((kind, items, opts) => {
    offered = items;
    options = opts;
    return items.find((i) => i.label === "stub" && /provider/.test(i.description));
  });
  const from = view.posted.length;
  view.receive({ type: "pickModel" });
  const output = await waitFor(view, { type: "commandOutput" }, { from });
  assert.equal(output.line, "/provider stub");
  await waitFor(view, { type: "busy", busy: false }, { from: view.posted.indexOf(output) });
  assert.ok(view.posted.slice(from).some((m) => m.type === "command" && m.line === "/provider stub"), "the command is shown in the chat");
  assert.match(options.title, /now stub · stub/);
  const separators = offered.filter((i) => i.kind === vscode.QuickPickItemKind.Separator).map((i) => i.label);
  assert.ok(separators.includes("Providers"), JSON.stringify(separators));
  const names = offered.filter((i) => i.kind !== vscode.QuickPickItemKind.Separator);
  assert.deepEqual(names.filter((i) => /\/provider /.test(i.description)).map((i) => i.label), providers);
  assert.match(names.find((i) => i.label === "stub").description, /^\(current\)/);

  // "Elelem: Pick Model" from the palette, a model this time: the stub answers as `vision`
  fake.answers.push(() => ({ label: "vision", description: "/model vision", entry: { kind: "model", name: "vision" } }));
  const next = view.posted.length;
  await vscode.commands.executeCommand("elelem.pickModel");
  const session = await waitFor(view, (m) => m.type === "session" && m.model === "vision", { from: next });
  assert.equal(session.provider, "stub");
  assert.ok(view.posted.slice(next).some((m) => m.type === "command" && m.line === "/model vision"));
});

withChat("the picker offers nothing the daemon did not list, and a dismissed picker runs nothing", async ({ view, chat }) => {
  await send(view, "!echo hi");
  // a hostile daemon's list: names with spaces or control characters, non-strings, thousands
  const real = chat.daemon.request.bind(chat.daemon);
  chat.daemon.request = async (method, params) => {
    if (method === "session/complete" && params.text === "/model ") {
      return { items: ["good-1", "two words", "bell\u0007", 42, null, ...Array.from({ length: 500 }, (_, i) => `m${i}`)] };
    }
    return real(method, params);
  };
  let offered;
  fake.answers.push((kind, items) => {
    offered = items;
    return undefined;
  });
  const from = view.posted.length;
  await vscode.commands.executeCommand("elelem.pickModel");
  const models = offered.filter((i) => /\/model /.test(i.description ?? "")).map((i) => i.label);
  assert.equal(models[0], "good-1");
  assert.ok(!models.some((m) => /\s|\u0007/.test(m)), JSON.stringify(models.slice(0, 5)));
  assert.ok(models.length <= 200, `${models.length} models offered`);
  assert.ok(!view.posted.slice(from).some((m) => m.type === "command"), "a dismissed picker ran a command");
});

/** An OpenAI-compatible server on 127.0.0.1 that answers as a local llama.cpp does: its
 * answers name the model it serves (`SmolLM2-135M`), whatever was asked for. */
function servingSmolLM() {
  const http = require("http");
  const server = http.createServer((req, res) => {
    if (req.method === "GET") {
      res.writeHead(200, { "content-type": "application/json" });
      return res.end(JSON.stringify({ data: [{ id: "SmolLM2-135M", owned_by: "llamacpp" }] }));
    }
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      const chunk = (delta, finish, usage) =>
        `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", model: "SmolLM2-135M", choices: [{ index: 0, delta, finish_reason: finish }], ...(usage ? { usage } : {}) })}\n\n`;
      res.write(chunk({ role: "assistant", content: "hello" }, null));
      res.write(chunk({}, "stop", { prompt_tokens: 12, completion_tokens: 1 }));
      res.end("data: [DONE]\n\n");
    });
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

test("the header names the model that answers (servedModel), not the one asked for (issue 40)", async () => {
  const server = await servingSmolLM();
  const { DAEMON_ENV } = require("./helpers");
  const url = `http://127.0.0.1:${server.address().port}/v1`;
  const env = await activate({
    "elelem.provider": "openai",
    "elelem.env": { ...DAEMON_ENV, OPENAI_BASE_URL: url, OPENAI_API_KEY: "sk-local", OPENAI_MODEL: "gpt-4o" },
  });
  try {
    const { view } = env;
    await send(view, "hi");
    const shown = await waitFor(view, (m) => m.type === "session" && m.model === "SmolLM2-135M");
    assert.equal(shown.provider, "openai");
    const sessions = view.posted.filter((m) => m.type === "session");
    assert.notEqual(sessions.at(-1).model, "gpt-4o");
  } finally {
    await deactivate(env.context);
    server.close();
  }
});
