// Issue 21 through the real daemon (stub provider): attachments from the editor (file,
// selection, problems, images) as the model reads them, @ completion, invalid_attachment
// keeping the prompt, editor/state in the system prompt, fs/read_text_file and fs/write_text_file.
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("fs");
const path = require("path");
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

const range = (a, b, c, d) => new vscode.Range(a, b, c, d);

/** An editor on `name` (written to disk) with lines 2-3 selected. */
function editorOn(name, text = "def main():\n    return x\n    # end\n") {
  const file = path.join(fake.workspaceFolder, name);
  fs.writeFileSync(file, text);
  const document = fake.open(file, text);
  const selection = Object.assign(range(1, 0, 3, 0), { isEmpty: false });
  document.getText = (r) => (r ? text.split("\n").slice(r.start.line, r.end.line).join("\n") + "\n" : text);
  fake.activeTextEditor = { document, selection, visibleRanges: [range(0, 0, 3, 0)] };
  return { file, document };
}

async function chip(view, what) {
  const from = view.posted.length;
  view.receive({ type: "attach", what });
  return waitFor(view, (m) => m.type === "chip" || m.type === "attachError", { from });
}

const lastUser = (messages) => messages.filter((m) => m.role === "user").at(-1).content;

withChat("the file, the selection and the problems chips reach the model as attachment blocks", async ({ view, chat }) => {
  const { file } = editorOn("app.py");
  fake.diagnostics.set(file, [{ range: range(1, 11, 1, 12), severity: 0, message: '"x" is not defined', source: "pyright" }, { range: range(2, 4, 2, 9), severity: 3, message: "a hint" }]);
  const selection = await chip(view, "selection");
  assert.deepEqual([selection.label, selection.attachment.type, selection.attachment.range], ["app.py:2-3", "selection", { start: { line: 1, character: 0 }, end: { line: 3, character: 0 } }]);
  const problems = await chip(view, "problems");
  assert.equal(problems.label, "2 problems in app.py");
  assert.deepEqual(problems.attachment.items.map((i) => i.severity), ["error", "hint"]);
  const whole = await chip(view, "file");
  const { last, posted } = await (async () => {
    const from = view.posted.length;
    view.receive({ type: "send", text: "explain", attachments: [selection, problems, whole].map((c) => ({ ...c.attachment, label: c.label })) });
    const end = await waitFor(view, { type: "turnEnd" }, { from });
    return { last: end, posted: view.posted.slice(from) };
  })();
  assert.equal(last.stopReason, "end_turn");
  assert.deepEqual(posted.find((m) => m.type === "user").attachments.map((a) => a.label), ["app.py:2-3", "2 problems in app.py", "app.py"]);
  const content = lastUser(await chat.context());
  assert.match(content, /^explain\n\n<attachment type="selection" path="app.py" lines="2-3">\n    return x\n    # end\n<\/attachment>/);
  assert.match(content, /<attachment type="diagnostics" path="app.py">\napp.py:2:12: error: "x" is not defined \(pyright\)\n/);
  assert.match(content, /<attachment type="file" path="app.py">\ndef main\(\):/);
});

withChat("no editor, no selection, no problems: the chat says why and attaches nothing", async ({ view }) => {
  assert.equal((await chip(view, "file")).text, "Open a file in the editor first.");
  editorOn("a.py");
  fake.activeTextEditor.selection.isEmpty = true;
  assert.equal((await chip(view, "selection")).text, "Select some code first.");
  assert.equal((await chip(view, "problems")).text, "No problems in a.py.");
});

withChat("an image the provider cannot see is refused with invalid_attachment: the prompt and its chips come back", async ({ view }) => {
  const image = { type: "image", mimeType: "image/png", data: "iVBORw0KGgo=", label: "shot.png" };
  const from = view.posted.length;
  view.receive({ type: "send", text: "what is this?", attachments: [image] });
  const refused = await waitFor(view, { type: "refused" }, { from });
  assert.match(refused.text, /image/);
  assert.match(refused.text, /invalid_attachment/);
  const unsent = await waitFor(view, { type: "unsent" }, { from });
  assert.equal(unsent.text, "what is this?");
  assert.deepEqual(unsent.attachments, [image]);
  assert.ok(!view.posted.slice(from).some((m) => m.type === "turnEnd"));
});

withChat("an image reaches a provider with vision as a list of parts", async ({ view, chat }) => {
  const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="; // 1x1
  const from = view.posted.length;
  view.receive({ type: "send", text: "what is this?", attachments: [{ type: "image", mimeType: "image/png", data: png, label: "dot.png" }] });
  const end = await waitFor(view, (m) => m.type === "turnEnd" || m.type === "refused", { from });
  assert.equal(end.type, "turnEnd", JSON.stringify(end));
  const content = lastUser(await chat.context());
  assert.ok(Array.isArray(content), `a list of parts: ${JSON.stringify(content)}`);
  assert.ok(content.some((p) => p.type === "image"));
}, { "elelem.model": "vision" });

withChat("a file attachment that is missing is refused, and the prompt comes back", async ({ view }) => {
  const from = view.posted.length;
  view.receive({ type: "send", text: "explain this", attachments: [{ type: "file", path: "nope/missing.py", label: "missing.py" }] });
  const refused = await waitFor(view, { type: "refused" }, { from });
  assert.match(refused.text, /missing\.py/);
  assert.equal((await waitFor(view, { type: "unsent" }, { from })).text, "explain this");
});

withChat("@ completes file names through session/complete", async ({ view }) => {
  fs.mkdirSync(path.join(fake.workspaceFolder, "src"));
  fs.writeFileSync(path.join(fake.workspaceFolder, "src/routes.py"), "x = 1\n");
  await send(view, "!echo start"); // a session
  let items = [];
  for (let i = 0; i < 50 && !items.some((x) => x.label === "@src/routes.py"); i++) {
    const from = view.posted.length;
    view.receive({ type: "complete", text: "see @rou" });
    items = (await waitFor(view, { type: "completions" }, { from })).items;
    if (!items.length) await new Promise((r) => setTimeout(r, 200)); // the file index renews in the background
  }
  assert.ok(items.some((x) => x.label === "@src/routes.py"), JSON.stringify(items));
});

withChat("editor/state reaches the next prompt as a note after a pause, never the system prompt", async ({ view, chat }) => {
  await send(view, "!echo start");
  const { file } = editorOn("state.py");
  fake.activeEditorChanged.fire(fake.activeTextEditor);
  // protocol.md "editor/state": a <context-note> ahead of the next prompt (session/context shows it there)
  let noted;
  for (let i = 0; i < 20 && !noted; i++) {
    await new Promise((r) => setTimeout(r, 500));
    await send(view, `!echo next ${i}`);
    const messages = await chat.context();
    noted = messages.filter((m) => m.role === "user").find((m) => JSON.stringify(m.content).includes("state.py"));
  }
  assert.ok(noted, "no prompt carried the editor's state");
  assert.match(JSON.stringify(noted.content), /context-note/);
  const system = (await chat.context()).find((m) => m.role === "system")?.content ?? "";
  assert.ok(!system.includes(file), "the system prompt changed for the editor's state");
});

withChat("fs/read_text_file serves open documents (-32002 otherwise); fs/write_text_file edits an open document in one step, else the disk", async () => {
  require("./helpers");
  const files = require("../dist/lib/files.js");
  const file = path.join(fake.workspaceFolder, "w.txt");
  fs.writeFileSync(file, "disk\n");
  assert.throws(() => files.readTextFile({ path: file }), (e) => e.code === -32002);
  const document = fake.open(file, "buffer\n");
  assert.deepEqual(files.readTextFile({ path: file }), { content: "buffer\n" });
  assert.deepEqual(files.readFile({ path: file }), { text: "buffer\n", version: 1 });
  assert.equal(files.readFile({ path: "/nowhere/else" }), null);
  await files.writeTextFile({ path: file, content: "new\n" });
  assert.equal(document.getText(), "new\n");
  assert.equal(fs.readFileSync(file, "utf8"), "disk\n");
  document.undo();
  assert.equal(document.getText(), "buffer\n");
  const closed = path.join(fake.workspaceFolder, "closed.txt");
  await files.writeTextFile({ path: closed, content: "made\n" });
  assert.equal(fs.readFileSync(closed, "utf8"), "made\n");
  await assert.rejects(files.writeTextFile({ path: 7, content: "x" }), /string path and content/);
});
