// The webview (media/main.js bundled to dist/webview.js) in headless Chromium, with the
// HTML the extension generates and acquireVsCodeApi stubbed to record what it posts.
"use strict";
const { test, before, after } = require("node:test");
const assert = require("node:assert/strict");
const fs = require("fs");
const os = require("os");
const path = require("path");
const { chromium } = require("playwright-core");
const { DAEMON_ENV, fake, activate, deactivate, send, waitFor, workspace, Memento } = require("./helpers");

const CHROMIUM = process.env.ELELEM_CHROMIUM || "/usr/bin/chromium";
let browser;
let htmlFile;

before(async () => {
  // The real HTML, from the extension (no daemon starts before a message is sent).
  const { context } = await activate();
  const html = fake.view.webview.html;
  await deactivate(context);
  htmlFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "elelem-webview-")), "index.html");
  fs.writeFileSync(htmlFile, html);
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"],
  });
});

after(async () => {
  await browser?.close();
});

/**
 * What the extension posts to the webview for real turns against the real daemon (stub
 * provider): `script(view)` drives it; the messages are then replayed into the page.
 */
async function recorded(script, settings) {
  const env = await activate(settings);
  try {
    await script(env.view);
    return env.view.posted.filter((m) => m.type !== "busy");
  } finally {
    await deactivate(env.context);
  }
}

/** The text of every element under `selector` that is visible in the scrolled #log. */
function inView(page, selector) {
  return page.evaluate((selector) => {
    const box = document.querySelector("#log").getBoundingClientRect();
    return [...document.querySelectorAll(selector)]
      .filter((node) => {
        const r = node.getBoundingClientRect();
        return r.height > 0 && r.top >= box.top - 1 && r.bottom <= box.bottom + 1;
      })
      .map((node) => node.textContent);
  }, selector);
}

async function open(viewport) {
  const page = await browser.newPage(viewport ? { viewport } : {});
  const requests = [];
  const errors = [];
  page.on("request", (request) => requests.push(request.url()));
  page.on("pageerror", (error) => errors.push(error.message));
  page.on("console", (message) => message.type() === "error" && errors.push(message.text()));
  await page.addInitScript(() => {
    window.__posted = [];
    let state;
    window.acquireVsCodeApi = () => ({
      postMessage: (message) => window.__posted.push(message),
      getState: () => state,
      setState: (value) => (state = value),
    });
  });
  await page.goto(`file://${htmlFile}`);
  await page.waitForFunction(() => window.__posted.some((m) => m.type === "ready"));
  // Dispatched at once, as VS Code's own messages arrive: window.postMessage queues a task,
  // so an assertion right after it could run before the page handled the message (issue 40:
  // the input still said "Steer the running turn…" after `busy: false`).
  const post = (...messages) =>
    page.evaluate((all) => all.forEach((m) => window.dispatchEvent(new MessageEvent("message", { data: m }))), messages);
  const posted = () => page.evaluate(() => window.__posted);
  return { page, post, posted, requests, errors };
}

test("streamed Markdown renders with code blocks, thinking collapsed", async () => {
  const { page, post, errors } = await open();
  await post(
    { type: "user", text: "hi" },
    { type: "thinking", turnId: 1, text: "hmm" },
    { type: "saying", turnId: 1, text: "# Title\n\nSome **bold** and " },
    { type: "saying", turnId: 1, text: "`code`.\n\n```python\nprint('x')\n```\n" },
    { type: "turnEnd", turnId: 1, reply: "", stopReason: "end_turn", usage: { input_tokens: 3, output_tokens: 4 } },
  );
  await page.waitForSelector(".markdown pre code.language-python");
  assert.equal(await page.textContent(".markdown h1"), "Title");
  assert.equal(await page.textContent(".markdown strong"), "bold");
  assert.equal(await page.textContent(".markdown pre code"), "print('x')\n");
  assert.equal(await page.getAttribute("details.thinking", "open"), null);
  assert.equal(await page.textContent("details.thinking .body"), "hmm");
  assert.equal(await page.textContent(".usage"), "3 in · 4 out");
  assert.equal(await page.textContent(".turn.user"), "hi");
  assert.deepEqual(errors, []);
});

test("a turn's summary shows the cache's share, the context meter and the session's cost", async () => {
  const { page, post, errors } = await open();
  await post(
    { type: "user", text: "hi" },
    { type: "saying", turnId: 1, text: "ok" },
    { type: "usage", turnId: 1, used: 15, size: 1000, cost: 0.0108, session: { cost: 0.0216 } },
    {
      type: "turnEnd",
      turnId: 1,
      reply: "ok",
      stopReason: "end_turn",
      usage: { input_tokens: 12, output_tokens: 3, cache_read_tokens: 8 },
    },
    { type: "user", text: "again" },
    { type: "turnEnd", turnId: 2, reply: "ok", stopReason: "end_turn", usage: { input_tokens: 1, output_tokens: 1 } },
  );
  await page.waitForSelector(".turn:last-child .usage");
  assert.deepEqual(await page.$$eval(".usage", (nodes) => nodes.map((n) => n.textContent)), [
    "12 in (8 cached) · 3 out · 15/1.0k ctx (1%) · $0.0216",
    "1 in · 1 out", // no event/usage came for it: no meter
  ]);
  assert.deepEqual(errors, []);
});

test("HTML in replies is shown as text and nothing remote loads", async () => {
  const { page, post, requests, errors } = await open();
  await post({
    type: "saying",
    turnId: 1,
    text: '<img src="x" onerror="window.pwned=1"><script>window.pwned=2</script>\n\n![logo](https://example.com/logo.png) [bad](javascript:window.pwned=3)',
  });
  await page.waitForSelector(".markdown a.image-link");
  assert.equal(await page.locator(".markdown img").count(), 0);
  assert.equal(await page.locator(".markdown script").count(), 0);
  assert.match(await page.textContent(".markdown"), /<img src="x"/);
  assert.equal(await page.locator('.markdown a[href^="javascript"]').count(), 0);
  assert.equal(await page.evaluate(() => window.pwned), undefined);
  assert.deepEqual(requests.filter((url) => !url.startsWith("file://")), []);
  assert.deepEqual(errors, []);
});

test("a tool call shows its arguments and, collapsible, its result", async () => {
  const { page, post } = await open();
  await post(
    { type: "doing", turnId: 1, id: "c1", name: "execute", arguments: { command: "echo hi" } },
    { type: "doing", turnId: 1, id: "c2", name: "read", arguments: { path: "nope" } },
  );
  await page.waitForSelector("details.tool.running");
  assert.equal(await page.textContent("details.tool .status"), "running…");
  await post(
    { type: "result", turnId: 1, id: "c1", name: "execute", ok: true, result: { exit_status: 0, stdout: "hi\n", ok: true } },
    { type: "result", turnId: 1, id: "c2", name: "read", ok: false, result: { error: "no such file", ok: false } },
  );
  await page.waitForSelector("details.tool.error");
  const ok = page.locator("details.tool.ok");
  assert.equal(await ok.locator(".name").textContent(), "execute");
  assert.equal(await ok.locator(".args").textContent(), '{"command":"echo hi"}');
  assert.equal(await ok.locator(".status").textContent(), "ok");
  assert.equal(await ok.getAttribute("open"), null);
  await ok.locator("summary").click();
  assert.equal(await ok.locator("pre.result").isVisible(), true);
  assert.match(await ok.locator("pre.result").textContent(), /stdout:\nhi/);
  assert.match(await page.locator("details.tool.error pre.result").textContent(), /error:\nno such file/);
});

test("Enter sends, Stop and New Session post their messages", async () => {
  const { page, post, posted } = await open();
  await page.fill("#input", "hello there");
  await page.press("#input", "Enter");
  assert.deepEqual((await posted()).filter((m) => m.type === "send"), [{ type: "send", text: "hello there" }]);
  assert.equal(await page.inputValue("#input"), "");
  assert.equal(await page.isDisabled("#stop"), true);
  await post({ type: "busy", busy: true });
  await page.waitForSelector("#stop:not([disabled])");
  assert.equal(await page.isDisabled("#send"), false, "while a turn runs, Send steers it");
  assert.match(await page.getAttribute("#send", "title"), /^Steer/);
  assert.match(await page.getAttribute("#input", "placeholder"), /^Steer the running turn/);
  await page.click("#stop");
  await page.focus("#input");
  await page.keyboard.press("Escape");
  assert.equal((await posted()).filter((m) => m.type === "stop").length, 2, "Escape stops a busy turn");
  await page.click("#new");
  const types = (await posted()).map((m) => m.type);
  assert.ok(types.includes("stop") && types.includes("newSession"), types.join(","));
  await page.fill("#input", "line one");
  await page.press("#input", "Shift+Enter");
  await page.press("#input", "Enter");
  const sent = (await posted()).filter((m) => m.type === "send");
  assert.deepEqual(sent.at(-1), { type: "send", text: "line one" }, "sent while busy: the extension makes it a steer");
  assert.equal(sent.length, 2);
  await post({ type: "busy", busy: false });
  assert.match(await page.getAttribute("#input", "placeholder"), /^Ask elelem/);
});

test("typing / asks for completions and Tab accepts one", async () => {
  const { page, post, posted } = await open();
  await page.type("#input", "/he");
  await page.waitForFunction(() => window.__posted.some((m) => m.type === "complete" && m.text === "/he"));
  await post({ type: "completions", text: "/he", items: [{ label: "/help", detail: "Show available commands" }, { label: "/hello" }] });
  await page.waitForSelector("#completions:not([hidden]) li.selected");
  assert.equal(await page.locator("#completions li").count(), 2);
  await page.press("#input", "ArrowDown");
  assert.equal(await page.textContent("#completions li.selected .label"), "/hello");
  await page.press("#input", "ArrowUp");
  await page.press("#input", "Tab");
  assert.equal(await page.inputValue("#input"), "/help ");
  assert.equal(await page.isHidden("#completions"), true);
  assert.ok((await posted()).every((m) => m.type !== "send"));
  await page.type("#input", "x");
  await page.fill("#input", "/context j");
  await page.type("#input", "s");
  await post({ type: "completions", text: "/context js", items: [{ label: "json" }] });
  await page.waitForSelector("#completions:not([hidden]) li.selected");
  await page.press("#input", "Tab");
  assert.equal(await page.inputValue("#input"), "/context json");
  assert.ok((await posted()).every((m) => m.type !== "send"), "Tab completes, it does not send");
});

test("one Enter runs a slash command, with the completion list open or not", async () => {
  const { page, post, posted } = await open();
  const sent = async () => (await posted()).filter((m) => m.type === "send").map((m) => m.text);
  // a partial name: Enter takes the highlighted completion and sends it
  await page.type("#input", "/to");
  await post({ type: "completions", text: "/to", items: [{ label: "/tools", detail: "List available tools" }] });
  await page.waitForSelector("#completions:not([hidden]) li.selected");
  await page.press("#input", "Enter");
  assert.deepEqual(await sent(), ["/tools"]);
  assert.equal(await page.inputValue("#input"), "");
  assert.equal(await page.isHidden("#completions"), true);
  // the whole name typed, the list still showing it
  await page.type("#input", "/help");
  await post({ type: "completions", text: "/help", items: [{ label: "/help" }] });
  await page.waitForSelector("#completions:not([hidden]) li.selected");
  await page.press("#input", "Enter");
  assert.deepEqual(await sent(), ["/tools", "/help"]);
  // after a space the list offers arguments, but Enter sends the line as typed
  await page.type("#input", "/context ");
  await post({ type: "completions", text: "/context ", items: [{ label: "json" }] });
  await page.waitForSelector("#completions:not([hidden]) li.selected");
  await page.press("#input", "Enter");
  assert.deepEqual(await sent(), ["/tools", "/help", "/context"]);
  // a list for what was typed before (stale) is not taken
  await page.type("#input", "/co");
  await post({ type: "completions", text: "/co", items: [{ label: "/context" }, { label: "/compact" }] });
  await page.waitForSelector("#completions:not([hidden]) li.selected");
  await page.type("#input", "mpact");
  await page.press("#input", "Enter");
  assert.deepEqual(await sent(), ["/tools", "/help", "/context", "/compact"]);
});

test("session header, stop reasons, a crash notice, then clear", async () => {
  const { page, post } = await open();
  await post(
    { type: "session", sessionId: "s1", cwd: "/w", provider: "stub", model: "m", commands: [], trusted: false },
    { type: "user", text: "go" },
    { type: "saying", turnId: 1, text: "tok0 " },
    { type: "turnEnd", turnId: 1, reply: "tok0 [cancelled]", stopReason: "cancelled" },
    { type: "daemonExited", code: null, signal: "SIGKILL", stderr: "Traceback…" },
  );
  await page.waitForSelector(".daemon-exited");
  assert.equal(await page.textContent("#status"), "stub · m · /w · untrusted: no project plugins");
  assert.equal(await page.textContent(".stop-reason"), "Stopped.");
  assert.match(await page.textContent(".daemon-exited"), /exited unexpectedly \(signal SIGKILL\)\. Your next message restarts it\./);
  await post({ type: "clear" });
  await page.waitForFunction(() => document.querySelector("#log").children.length === 0);
});

test("a loaded session's history is redrawn", async () => {
  const { page, post } = await open();
  await post({
    type: "history",
    messages: [
      { role: "user", content: "what is 2+2?" },
      { role: "assistant", content: "It is **4**." },
      { role: "tool", content: '{"ok":true}' },
    ],
  });
  await page.waitForSelector(".markdown strong");
  assert.equal(await page.textContent(".turn.user"), "what is 2+2?");
  assert.equal(await page.textContent(".markdown strong"), "4");
  assert.equal(await page.textContent("pre.history-tool"), '{"ok":true}');
});

test("a compaction in a loaded history is drawn as a notice between its turns", async () => {
  const { page, post } = await open();
  await post({
    type: "history",
    messages: [
      { type: "message", role: "user", content: "before" },
      { type: "message", role: "assistant", content: "kept for the user" },
      { type: "compacted" },
      { type: "message", role: "user", content: "Context: a summary" },
    ],
  });
  await page.waitForSelector(".notice.compacted");
  assert.match(await page.textContent(".notice.compacted"), /Context compacted here/);
  const order = await page.evaluate(() => [...document.querySelectorAll("#log > *")].map((n) => n.className));
  const at = order.findIndex((c) => c.includes("compacted"));
  assert.ok(at > 0 && at === order.length - 1, order.join(" | "));
  // the summary is the model's, not a prompt the user typed: folded into the marker
  assert.deepEqual(await page.locator(".turn.user").allTextContents(), ["before"]);
  assert.equal(await page.textContent(".notice.compacted details.summary .body"), "Context: a summary");
  assert.equal(await page.evaluate(() => document.querySelector(".notice.compacted details.summary").open), false);
});

test("a reloaded window redraws the stored tool calls, their diffs and failures (real daemon)", async () => {
  const ws = workspace();
  fs.writeFileSync(path.join(ws, "notes.md"), "# kept\n");
  const workspaceState = new Memento();
  let env = await activate({}, { workspace: ws, workspaceState });
  try {
    await send(env.view, '!tool read {"path":"notes.md"}');
    await send(env.view, "!tool read {}");
    // the write is reviewed (capabilities.files.review): accepted in the chat's card
    env.view.bus.on("message", (m) => m.type === "review" && env.view.receive({ type: "review", reviewId: m.reviewId, action: "acceptAll" }));
    await send(env.view, '!tool write {"path":"new.txt","content":"a new line\\n"}');
  } finally {
    await deactivate(env.context);
  }
  env = await activate({}, { workspace: ws, workspaceState });
  let history;
  try {
    history = await waitFor(env.view, { type: "history" });
  } finally {
    await deactivate(env.context);
  }
  const { page, post, errors } = await open();
  await post(history);
  await page.waitForSelector("details.tool.error");
  const cards = page.locator("details.tool");
  assert.equal(await cards.count(), 3);
  assert.deepEqual(await cards.locator(".status").allTextContents(), ["ok", "error", "ok"]);
  assert.deepEqual(await cards.locator(".name").allTextContents(), ["read", "read", "write"]);
  assert.match(await cards.nth(0).locator("pre.result").textContent(), /# kept/);
  assert.match(await cards.nth(1).locator("pre.result").textContent(), /missing required properties: path/);
  assert.match(await cards.nth(2).locator("pre.diff").textContent(), /\+a new line/);
  // each card sits in its turn, before that turn's reply
  const turns = page.locator(".turn.assistant");
  assert.equal(await turns.count(), 3);
  assert.match(await turns.nth(0).locator("details.tool + .markdown").textContent(), /^done\.\s*$/);
  assert.deepEqual(await page.locator(".turn.user").allTextContents(), [
    '!tool read {"path":"notes.md"}',
    "!tool read {}",
    '!tool write {"path":"new.txt","content":"a new line\\n"}',
  ]);
  assert.equal(await page.locator("details.tool.running").count(), 0);
  assert.deepEqual(errors, []);
});

test("a failed turn shows its error once", async () => {
  const { page, post } = await open();
  await post(
    { type: "user", text: "go" },
    { type: "turnEnd", turnId: 1, reply: "Error: the model is down", stopReason: "error" },
  );
  await page.waitForSelector(".stop-reason.error");
  assert.equal(await page.textContent(".stop-reason.error"), "Error: the model is down");
  assert.equal(await page.locator(".markdown").count(), 0);
});

test("a permission question shows the tool, its arguments and its diff", async () => {
  const { page, post } = await open();
  await post(
    {
      type: "ask",
      kind: "permission",
      prompt: "Allow write?",
      tool: { name: "write", arguments: { path: "a.txt", content: "new" }, diff: "--- a/a.txt\n+++ b/a.txt\n-old\n+new\n" },
    },
    { type: "answer", text: "allow" },
  );
  await page.waitForSelector(".notice.answer");
  assert.match(await page.textContent(".notice.ask"), /Elelem asks: Allow write\?Tool: write/);
  assert.match(await page.textContent(".notice.ask pre.arguments"), /"path": "a.txt"/);
  assert.equal(await page.textContent(".notice.ask pre.diff"), "--- a/a.txt\n+++ b/a.txt\n-old\n+new\n");
  assert.equal(await page.textContent(".notice.answer"), "You answered: allow");
});

test("a permission question for a running tool goes into its card", async () => {
  const { page, post } = await open();
  await post(
    { type: "user", text: "go" },
    { type: "doing", turnId: 1, id: "c1", name: "execute", arguments: { command: "rm -rf build" } },
    { type: "ask", kind: "permission", prompt: "Allow execute: rm -rf build?", tool: { name: "execute", arguments: { command: "rm -rf build" } } },
  );
  await page.waitForSelector("details.tool .notice.ask");
  assert.equal(await page.getAttribute("details.tool", "open"), "");
  assert.equal(await page.locator("details.tool .notice.ask pre").count(), 0, "the card shows the arguments already");
  await post({ type: "answer", text: "deny" }, { type: "result", turnId: 1, id: "c1", name: "execute", ok: false, result: { error: "User denied permission: execute", ok: false } });
  await page.waitForSelector("details.tool.error");
  assert.equal(await page.textContent("details.tool .notice.answer"), "You answered: deny");
  assert.match(await page.textContent("details.tool pre.result"), /User denied permission/);
});

test("a prompt that never reached the daemon comes back to the prompt box", async () => {
  const { page, post } = await open();
  await post({ type: "error", text: "Could not start the elelem daemon" }, { type: "unsent", text: "my first prompt" });
  await page.waitForFunction(() => document.querySelector("#input").value === "my first prompt");
  await page.fill("#input", "something new");
  await post({ type: "unsent", text: "older prompt" });
  await page.waitForSelector(".notice.error");
  assert.equal(await page.inputValue("#input"), "something new", "what the user typed since is not replaced");
});

test("Stop during a tool call marks its card cancelled (real daemon)", async () => {
  const messages = await recorded(async (view) => {
    const from = view.posted.length;
    view.receive({ type: "send", text: '!tool execute {"command":"sleep 30"}' });
    await waitFor(view, { type: "doing" }, { from });
    view.receive({ type: "stop" });
    assert.equal((await waitFor(view, { type: "turnEnd" }, { from })).stopReason, "cancelled");
  });
  const { page, post } = await open();
  await post(...messages);
  await page.waitForSelector(".stop-reason.cancelled");
  assert.equal(await page.locator("details.tool.running").count(), 0);
  assert.equal(await page.textContent("details.tool.cancelled .status"), "cancelled");
  assert.doesNotMatch(await page.textContent("#log"), /running…/);
});

test("a crash marks running tool cards interrupted and says the session resumes", async () => {
  const { page, post } = await open();
  await post(
    { type: "user", text: "go" },
    { type: "doing", turnId: 1, id: "c1", name: "execute", arguments: { command: "sleep 30" } },
    { type: "daemonExited", code: null, signal: "SIGKILL", stderr: "", resume: true },
  );
  await page.waitForSelector(".daemon-exited");
  assert.equal(await page.textContent("details.tool .status"), "interrupted");
  assert.match(await page.textContent(".daemon-exited"), /Your next message restarts it and resumes this session from its stored copy\./);
});

test("a provider error is printed once (real daemon)", async () => {
  const messages = await recorded((view) => send(view, "!fail the model is down"));
  assert.ok(messages.some((m) => m.type === "say" && m.kind === "error"), "the daemon says it (event/say)");
  assert.ok(messages.some((m) => m.type === "turnEnd" && m.stopReason === "error" && /the model is down/.test(m.reply)));
  const { page, post } = await open();
  await post(...messages);
  await page.waitForSelector(".stop-reason.error");
  const reply = await page.textContent(".turn.assistant");
  assert.equal(reply.split("the model is down").length - 1, 1, reply);
  assert.equal(await page.textContent(".stop-reason.error"), "The turn failed.");
});

test("command output that is Markdown is rendered; plain output keeps its lines (real daemon)", async () => {
  const messages = await recorded(async (view) => {
    await send(view, "/tools");
    await send(view, "/help");
    await send(view, "!echo hi");
    await send(view, "/context json");
  });
  const { page, post, errors } = await open();
  await post(...messages);
  await page.waitForSelector(".command-output code.language-json");
  const [tools, help] = await page.locator(".command-output").all();
  assert.ok((await tools.locator("li strong").count()) >= 5, "/tools is a list with bold tool names");
  assert.doesNotMatch(await tools.textContent(), /\*\*(read|execute)\*\*|^- /m, "no raw Markdown");
  assert.equal(await tools.locator("li strong").first().textContent(), "read");
  assert.ok(await tools.locator("li code").count(), "parameter names as code");
  const helpLines = await help.evaluate((node) => node.innerText.split("\n").filter((l) => l.trim()));
  assert.ok(helpLines.length >= 8 && helpLines.some((l) => /^\/help {2,}Show available commands$/.test(l)), helpLines.join("|"));
  assert.match(await page.textContent(".command-output code.language-json"), /"role": "system"/);
  assert.deepEqual(errors, []);
});

test("command output cannot inject HTML", async () => {
  const { page, post } = await open();
  await post({ type: "commandOutput", line: "/x", output: '<img src=x onerror="window.pwned=1"> **bold** [x](javascript:window.pwned=2)' });
  await page.waitForSelector(".command-output strong");
  assert.equal(await page.locator(".command-output img").count(), 0);
  assert.equal(await page.locator('.command-output a[href^="javascript"]').count(), 0);
  assert.equal(await page.evaluate(() => window.pwned), undefined);
});

test("code blocks are coloured; diff blocks are coloured by line", async () => {
  const { page, post, errors, requests } = await open();
  await post({
    type: "saying",
    turnId: 1,
    text: [
      "```python",
      "def greet(name):  # say hello",
      '    return f"hello {name}" + "<script>window.pwned=1</script>"',
      "```",
      "",
      "```diff",
      "--- a/x.py",
      "+++ b/x.py",
      "@@ -1,2 +1,2 @@",
      " keep",
      "-old",
      "+new",
      "```",
      "",
      "```nosuchlanguage",
      "plain <b>text</b>",
      "```",
    ].join("\n"),
  });
  await page.waitForSelector(".markdown pre code .line.add");
  const python = page.locator("code.language-python");
  assert.equal(await python.locator(".hljs-keyword").first().textContent(), "def");
  assert.ok(await python.locator(".hljs-string").count());
  assert.ok(await python.locator(".hljs-comment").count());
  assert.equal(await page.locator(".markdown script").count(), 0);
  assert.match(await python.textContent(), /<script>window.pwned=1<\/script>/, "code is shown as text");
  assert.equal(await python.textContent(), 'def greet(name):  # say hello\n    return f"hello {name}" + "<script>window.pwned=1</script>"\n');
  const colour = (selector) => page.locator(selector).first().evaluate((node) => getComputedStyle(node).color);
  assert.notEqual(await colour("code.language-python .hljs-keyword"), await colour("code.language-python"));
  const kinds = await page.locator("code.language-diff .line").evaluateAll((lines) => lines.map((l) => l.className));
  assert.deepEqual(kinds, ["line meta", "line meta", "line hunk", "line ", "line del", "line add"]);
  const background = (selector) => page.locator(selector).evaluate((node) => getComputedStyle(node).backgroundColor);
  assert.notEqual(await background("code.language-diff .line.add"), await background("code.language-diff .line.del"));
  assert.notEqual(await background("code.language-diff .line.add"), "rgba(0, 0, 0, 0)");
  assert.equal(await page.textContent("code.language-diff"), "--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,2 @@\n keep\n-old\n+new\n", "Copy copies the diff as it is");
  assert.equal(await page.locator("code.language-nosuchlanguage b").count(), 0);
  assert.equal(await page.evaluate(() => window.pwned), undefined);
  assert.deepEqual(requests.filter((url) => !url.startsWith("file://")), []);
  assert.deepEqual(errors, []);
});

test("the diff of a permission question and of a write result is coloured by line", async () => {
  const { page, post } = await open();
  await post(
    { type: "user", text: "go" },
    { type: "doing", turnId: 1, id: "c1", name: "write", arguments: { path: "a.txt", content: "new" } },
    { type: "ask", kind: "permission", prompt: "Allow write?", tool: { name: "write", arguments: {}, diff: "--- a/a.txt\n+++ b/a.txt\n-old\n+new\n" } },
    { type: "answer", text: "allow" },
    { type: "result", turnId: 1, id: "c1", name: "write", ok: true, result: { path: "a.txt", diff: "--- a/a.txt\n+++ b/a.txt\n-old\n+new\n", ok: true } },
  );
  await page.waitForSelector("details.tool.ok");
  assert.equal(await page.locator("details.tool .notice.ask pre.diff .line.add").count(), 1);
  assert.equal(await page.locator("details.tool .body > pre.diff .line.del").count(), 1);
  assert.doesNotMatch(await page.textContent("details.tool pre.result"), /diff/, "the diff is not printed twice");
});

test("Stopped. is scrolled into view", async () => {
  const { page, post } = await open({ width: 400, height: 300 });
  await post({ type: "user", text: "go" }, { type: "saying", turnId: 1, text: Array.from({ length: 80 }, (_, i) => `line ${i}`).join("\n\n") });
  await page.waitForFunction(() => document.querySelector(".markdown")?.textContent.includes("line 79"));
  await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
  await post({ type: "turnEnd", turnId: 1, reply: "…[cancelled]", stopReason: "cancelled", usage: { input_tokens: 1, output_tokens: 2 } });
  await page.waitForSelector(".stop-reason.cancelled");
  await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
  assert.deepEqual(await inView(page, ".stop-reason"), ["Stopped."]);
  assert.deepEqual(await inView(page, ".usage"), ["1 in · 2 out"]);
});

// --- issues 16, 17, 19, 20, 21: the review card, Restore checkpoint, chips, MCP, modes and plan

test("a review card: hunks ticked by default, Apply sends the ticked ones, the outcome is shown", async () => {
  const { page, post, posted, errors } = await open();
  await post(
    { type: "doing", turnId: 1, id: "c1", name: "write", arguments: { path: "a.py" } },
    { type: "review", reviewId: 7, turnId: 1, toolCallId: "c1", path: "a.py", newFile: false, hunks: [{ id: 1, diff: "@@ -1 +1 @@\n-a\n+b\n" }, { id: 2, diff: "@@ -9 +9 @@\n-c\n+d\n" }] },
  );
  await page.waitForSelector('details.tool[open] .review[data-review="7"] .review-hunk');
  assert.equal(await page.locator(".review .review-hunk input:checked").count(), 2);
  assert.equal(await page.locator(".review .review-hunk pre.diff .line.add").count(), 2);
  await page.locator('.review input[data-hunk="2"]').uncheck();
  await page.click(".review button.review-apply");
  assert.deepEqual((await posted()).at(-1), { type: "review", reviewId: 7, action: "apply", hunks: [1] });
  await page.click(".review button.review-acceptAllForTurn");
  assert.equal((await posted()).at(-1).action, "acceptAllForTurn");
  await post(
    { type: "reviewDone", reviewId: 7, accepted: [1], total: 2, acceptAllForTurn: false },
    { type: "result", turnId: 1, id: "c1", name: "write", ok: true, result: { path: "a.py", review: "applied 1 of 2 hunks; hunk 2 (lines 9–9) was rejected by the user", ok: true } },
  );
  await page.waitForSelector(".notice.review-outcome");
  assert.equal(await page.textContent(".review .review-decision"), "Accepted hunk 1 of 2.");
  assert.equal(await page.locator(".review button:not([disabled])").count(), 0);
  assert.equal(await page.textContent(".notice.review-outcome"), "Review: applied 1 of 2 hunks; hunk 2 (lines 9–9) was rejected by the user");
  assert.equal(await page.textContent("details.tool .review-tag"), "partial");
  await post({ type: "review", reviewId: 8, turnId: 1, toolCallId: "c9", path: "b.py", hunks: [{ id: 1, diff: "@@ -1 +1 @@\n-a\n+b\n" }] }, { type: "reviewDone", reviewId: 8, accepted: null, total: 1 });
  await page.waitForFunction(() => document.querySelector('.review[data-review="8"] .review-decision')?.textContent === "The review was withdrawn: nothing changed.");
  assert.deepEqual(errors, []);
});

test("each user message of a turn gets Restore checkpoint; after a redraw, session/checkpoints' turns mark them", async () => {
  const { page, post, posted, errors } = await open();
  await post({ type: "user", text: "first" }, { type: "saying", turnId: 4, text: "ok" }, { type: "turnEnd", turnId: 4, reply: "ok", stopReason: "end_turn" });
  await page.waitForSelector('.turn.user[data-turn-id="4"] + .user-actions button.restore');
  await page.click("button.restore");
  assert.deepEqual((await posted()).at(-1), { type: "rewind", turnId: 4 });
  await post(
    { type: "clear" },
    { type: "history", messages: [{ role: "user", content: "alpha\nmore" }, { role: "assistant", content: "a" }, { role: "user", content: [{ type: "text", text: "beta" }, { type: "image", mimeType: "image/png" }] }, { role: "assistant", content: "b" }] },
    { type: "turns", turns: [{ turnId: 2, prompt: "alpha" }, { turnId: 5, prompt: "beta" }] },
  );
  await page.waitForSelector('.turn.user[data-turn-id="5"]');
  assert.deepEqual(await page.$$eval(".turn.user", (all) => all.map((u) => u.dataset.turnId)), ["2", "5"]);
  assert.equal(await page.textContent('.turn.user[data-turn-id="5"]'), "beta\n[image]");
  assert.deepEqual(errors, []);
});

test("chips: attached file, selection and a pasted image go with the prompt; a refusal gives them back", async () => {
  const { page, post, posted, errors } = await open();
  await page.click('#attach button[data-attach="selection"]');
  assert.deepEqual((await posted()).at(-1), { type: "attach", what: "selection" });
  await post({ type: "chip", attachment: { type: "selection", path: "/w/a.py", range: { start: { line: 0, character: 0 }, end: { line: 2, character: 0 } }, text: "x\ny\n" }, label: "a.py:1-2" });
  await page.waitForSelector("#chips .chip.selection");
  await page.evaluate(() => {
    const bytes = Uint8Array.from(atob("iVBORw0KGgo="), (c) => c.charCodeAt(0));
    const transfer = new DataTransfer();
    transfer.items.add(new File([bytes], "shot.png", { type: "image/png" }));
    transfer.items.add(new File([bytes], "shot.bmp", { type: "image/bmp" }));
    document.querySelector("#input").dispatchEvent(new ClipboardEvent("paste", { clipboardData: transfer, bubbles: true, cancelable: true }));
  });
  await page.waitForSelector("#chips .chip.image img");
  assert.match(await page.textContent("#log"), /Not attached: shot\.bmp is image\/bmp/);
  await page.fill("#input", "explain");
  await page.press("#input", "Enter");
  const sent = (await posted()).at(-1);
  assert.equal(sent.type, "send");
  assert.deepEqual(sent.attachments.map((a) => [a.type, a.label]), [["selection", "a.py:1-2"], ["image", "shot.png"]]);
  assert.deepEqual([sent.attachments[1].mimeType, sent.attachments[1].data], ["image/png", "iVBORw0KGgo="]);
  assert.equal(await page.locator("#chips .chip").count(), 0);
  await post({ type: "user", text: "explain", attachments: [{ type: "selection", label: "a.py:1-2" }] }, { type: "refused", text: "attachments[0] (selection): too large (invalid_attachment)" }, { type: "unsent", text: "explain", attachments: sent.attachments });
  await page.waitForSelector(".turn.user.refused");
  assert.match(await page.textContent(".notice.refused"), /^Not sent: attachments\[0\] \(selection\): too large/);
  assert.equal(await page.inputValue("#input"), "explain");
  assert.equal(await page.locator("#chips .chip").count(), 2);
  await page.click("#mention");
  assert.equal(await page.inputValue("#input"), "explain @");
  assert.deepEqual((await posted()).at(-1), { type: "complete", text: "explain @" });
  await post({ type: "completions", text: "explain @", items: [{ label: "@src/app.py" }] });
  await page.waitForSelector("#completions:not([hidden]) li.selected");
  await page.press("#input", "Enter");
  assert.equal(await page.inputValue("#input"), "explain @src/app.py ", "Enter picks the file and does not send");
  assert.deepEqual(errors, []);
});

test("MCP status in the header, trouble said once in the log", async () => {
  const { page, post, errors } = await open();
  const server = (state, extra = {}) => ({ name: "files", source: "client", transport: "stdio", state, tools: ["files__a", "files__b"], error: null, ...extra });
  await post({ type: "mcp", mcp: { servers: [server("starting")], problems: ["session/new: mcpServers[1]: command must be a string"] } });
  await page.waitForSelector("#mcp:not([hidden]) .mcp-server.starting");
  assert.match(await page.textContent("#log"), /MCP: session\/new: mcpServers\[1\]: command must be a string/);
  await post({ type: "mcp", mcp: { servers: [server("ready")], problems: [] } });
  await page.waitForSelector("#mcp .mcp-server.ready");
  assert.equal(await page.textContent("#mcp"), "MCP: files ready (2 tools)");
  await post({ type: "mcp", mcp: { servers: [server("failed", { error: "exited with code 1" })], problems: [] } }, { type: "mcp", mcp: { servers: [server("failed", { error: "exited with code 1" })], problems: [] } });
  await page.waitForSelector("#mcp .mcp-server.failed");
  assert.equal(await page.locator(".notice.mcp-notice", { hasText: "MCP server files failed: exited with code 1" }).count(), 1);
  assert.deepEqual(errors, []);
});

test("a failing MCP server is one line in the chat, updated in place, never inside a streaming reply (issue 31)", async () => {
  const { page, post, errors } = await open();
  const server = (state, attempts, error = null) => ({ name: "broken", source: "client", transport: "stdio", state, tools: [], error, attempts });
  await post({ type: "user", text: "hi" }, { type: "saying", turnId: 1, text: "streaming " });
  for (let attempt = 1; attempt <= 5; attempt++) {
    await post(
      { type: "mcp", mcp: { servers: [server("starting", attempt)], problems: [] } },
      { type: "mcp", mcp: { servers: [server("retrying", attempt, `exited with code ${attempt}`)], problems: [] } },
    );
  }
  await post({ type: "saying", turnId: 1, text: "on." }, { type: "mcp", mcp: { servers: [server("failed", 6, "exited with code 6")], problems: [] } });
  await page.waitForSelector(".notice.mcp-notice.error");
  const lines = await page.locator(".notice.mcp-notice").allTextContents();
  assert.deepEqual(lines, ["MCP server broken failed (6 attempts): exited with code 6"]);
  await page.waitForFunction(() => [...document.querySelectorAll(".turn.assistant .markdown")].at(-1)?.textContent.trim() === "streaming on.");
  assert.deepEqual(errors, []);
});

test("the mode in the header opens the picker; the plan is one checklist updated in place; a sub-agent's events nest in its task card", async () => {
  const { page, post, posted, errors } = await open({ width: 360, height: 700 });
  const mode = (current) => ({ current, available: [{ id: "build", name: "Build", description: "all tools" }, { id: "plan", name: "Plan", description: "read only" }] });
  await post({ type: "session", sessionId: "s", cwd: "/w", provider: "stub", model: "stub", mode: mode("build") });
  await page.waitForSelector("#mode:not([hidden])");
  assert.equal(await page.textContent("#mode"), "Mode: Build ▾");
  await post({ type: "session", sessionId: "s", cwd: `/home/me/${"very-long-folder-name/".repeat(10)}`, provider: "stub", model: "stub", mode: mode("build") });
  const [button, width] = await page.evaluate(() => [document.querySelector("#mode").getBoundingClientRect().toJSON(), window.innerWidth]);
  assert.ok(button.left >= 0 && button.right <= width, `the mode button is out of view with a long folder: ${JSON.stringify(button)} in ${width}`);
  await page.click("#mode");
  assert.deepEqual((await posted()).at(-1), { type: "pickMode" });
  await post({ type: "mode", turnId: null, mode: mode("plan") });
  await page.waitForFunction(() => document.querySelector("#mode").textContent === "Mode: Plan ▾");
  await post(
    { type: "user", text: "do it" },
    { type: "plan", turnId: 1, entries: [{ content: "read", status: "in_progress" }, { content: "write", status: "pending" }] },
    { type: "doing", turnId: 1, id: "t1", name: "task", arguments: { prompt: "look" } },
    { type: "doing", turnId: 1, id: "t1", name: "read", arguments: { path: "x" }, parentToolCallId: "t1" },
    { type: "saying", turnId: 1, text: "child says", parentToolCallId: "t1" },
    { type: "result", turnId: 1, id: "t1", name: "read", ok: true, result: { content: "x", ok: true }, parentToolCallId: "t1" },
    { type: "plan", turnId: 1, entries: [{ content: "read", status: "completed" }, { content: "write", status: "in_progress" }] },
  );
  await page.waitForFunction(() => document.querySelector(".plan .label")?.textContent === "Plan: 1 of 2 done");
  assert.equal(await page.locator(".plan").count(), 1);
  assert.deepEqual(await page.$$eval(".plan li", (all) => all.map((li) => li.className)), ["entry completed", "entry in_progress"]);
  const card = page.locator("details.tool", { has: page.locator(":scope > summary .name", { hasText: "task" }) });
  assert.equal(await card.locator(".children details.tool.ok .name").textContent(), "read");
  assert.match(await card.locator(".children .markdown").textContent(), /child says/);
  assert.equal(await card.locator(":scope > summary .status").textContent(), "running…", "the child's result is not the task's");
  await post({ type: "result", turnId: 1, id: "t1", name: "task", ok: true, result: { reply: "found it", ok: true } });
  await page.waitForFunction(() => document.querySelector("details.tool > summary .status")?.textContent === "ok");
  assert.deepEqual(errors, []);
});

test("real daemon: a task sub-agent's events nest in its task card; a steer shows in the turn, queued then taken", async () => {
  const messages = await recorded(async (view) => {
    const ws = fake.workspaceFolder;
    fs.writeFileSync(path.join(ws, "a.txt"), "alpha\n");
    await send(view, `!tool task ${JSON.stringify({ prompt: '!tool read {"path": "a.txt"}' })}`);
    const from = view.posted.length;
    view.receive({ type: "send", text: `!tool execute ${JSON.stringify({ command: `while [ ! -e ${path.join(ws, "gate")} ]; do sleep 0.05; done` })}` });
    await waitFor(view, (m) => m.type === "doing" && m.name === "execute", { from });
    view.receive({ type: "send", text: "steer this way" });
    await waitFor(view, { type: "steerQueued" }, { from });
    fs.writeFileSync(path.join(ws, "gate"), "");
    await waitFor(view, { type: "turnEnd" }, { from });
  });
  const { page, post, errors } = await open();
  const queued = messages.findIndex((m) => m.type === "steerQueued");
  await post(...messages.slice(0, queued + 1));
  await page.waitForSelector(".steer.queued");
  assert.equal(await page.textContent(".steer.queued"), "steer this way");
  await post(...messages.slice(queued + 1));
  await page.waitForFunction(() => document.querySelectorAll(".turn.assistant").length >= 2 && document.querySelector(".steer:not(.queued)"));
  assert.equal(await page.locator(".steer").count(), 1, "the steer taken is the one queued");
  const card = page.locator("details.tool", { has: page.locator(":scope > summary .name", { hasText: "task" }) });
  assert.equal(await card.locator(".children details.tool.ok > summary .name").textContent(), "read");
  assert.match(await card.locator(".children details.tool.ok .result").textContent(), /alpha/);
  assert.equal(await card.locator(":scope > summary .status").textContent(), "ok");
  assert.equal(await page.locator("#log > .turn > details.tool > summary .name", { hasText: "read" }).count(), 0, "the child's call is not the parent's");
  const second = page.locator(".turn.assistant").nth(1);
  assert.match(await second.textContent(), /steer this way[\s\S]*steered: steer this way\. done\./);
  assert.deepEqual(errors, []);
});

test("a steer the turn never took is marked not sent when the turn ends", async () => {
  const { page, post, errors } = await open();
  await post(
    { type: "user", text: "go" },
    { type: "doing", turnId: 1, id: "c1", name: "execute", arguments: { command: "sleep 9" } },
    { type: "steerQueued", text: "too late" },
    { type: "say", turnId: 1, kind: "info", text: "steer not sent (the turn ended first): too late" },
    { type: "turnEnd", turnId: 1, reply: "", stopReason: "cancelled" },
  );
  await page.waitForSelector(".steer.dropped");
  assert.equal(await page.locator(".steer.queued").count(), 0);
  assert.equal(await page.textContent(".steer.dropped"), "too late");
  assert.deepEqual(errors, []);
});

// --- issue 40: the meter, the model button, long lines, the end of a redrawn chat ---------

test("the context meter in the header: ctx, cached, cost as Neovim words it; a warning from 10 % before compactAt; a clear hides it", async () => {
  const { page, post, errors } = await open({ width: 360, height: 500 });
  const usage = (used, extra = {}) => ({
    type: "usage", turnId: 1, inputTokens: 800, outputTokens: 20, cacheReadTokens: 704, cacheWriteTokens: 0,
    used, size: 1000, cost: 0.002, compactAt: 0.85, session: { turns: 1, cost: 0.0108 }, ...extra,
  });
  await post({ type: "session", sessionId: "s", cwd: "/w", provider: "stub", model: "stub" });
  assert.equal(await page.isHidden("#meter"), true, "a meter before any usage");
  await post(usage(740));
  await page.waitForSelector("#meter:not([hidden])");
  assert.equal(await page.textContent("#meter"), "ctx 740/1.0k 74% · 88% cached · $0.0108");
  assert.equal(await page.locator("#meter.warn").count(), 0);
  await post(usage(800));
  await page.waitForFunction(() => document.querySelector("#meter").classList.contains("warn"));
  assert.equal(await page.textContent("#meter"), "ctx 800/1.0k 80% · 88% cached · $0.0108 · ⚠ auto-compacts at 85%");
  assert.match(await page.getAttribute("#meter", "title"), /compacts the conversation before a turn once the context is past 85%/);
  // always in view: a long log scrolls under the header, the meter stays put and inside the width
  for (let i = 0; i < 40; i++) await post({ type: "command", line: `/line ${i}` });
  const [box, width] = await page.evaluate(() => [document.querySelector("#meter").getBoundingClientRect().toJSON(), window.innerWidth]);
  assert.ok(box.top >= 0 && box.bottom <= 500 && box.right <= width + 1, `the meter is out of view: ${JSON.stringify(box)}`);
  // compactAt 0 (never compacts): no warning; no price: no cost; no window: no ctx
  await post(usage(990, { compactAt: 0, session: { turns: 1, cost: null } }));
  await page.waitForFunction(() => !document.querySelector("#meter").classList.contains("warn"));
  assert.equal(await page.textContent("#meter"), "ctx 990/1.0k 99% · 88% cached");
  await post(usage(990, { size: null, cacheReadTokens: 0, session: { turns: 1, cost: 1.5 } }));
  await page.waitForFunction(() => document.querySelector("#meter").textContent === "$1.5000");
  // hostile numbers draw nothing odd
  await post(usage("9", { size: -1, compactAt: "x", inputTokens: null, session: null }));
  await page.waitForSelector("#meter[hidden]", { state: "attached" });
  await post(usage(500), { type: "clear" });
  await page.waitForSelector("#meter[hidden]", { state: "attached" });
  assert.deepEqual(errors, []);
});

test("real daemon: event/usage's compactAt and window reach the header's meter", async () => {
  const messages = await recorded(
    async (view) => {
      // the stub passes a scripted event on: the counts a real provider reports
      await send(view, '!events [{"type": "saying", "text": "hi"}, {"type": "usage", "input_tokens": 800, "output_tokens": 20, "cache_read_tokens": 704}]');
    },
    { "elelem.env": { ...DAEMON_ENV, ELELEM_CONTEXT_WINDOW: "1000", ELELEM_COMPACT_AT: "0.5" } },
  );
  const usage = messages.find((m) => m.type === "usage");
  assert.ok(usage, `no usage event: ${JSON.stringify(messages.map((m) => m.type))}`);
  assert.equal(usage.compactAt, 0.5);
  assert.equal(usage.size, 1000);
  const { page, post, errors } = await open();
  await post(...messages);
  await page.waitForSelector("#meter:not([hidden])");
  assert.equal(await page.textContent("#meter"), `ctx ${usage.used}/1.0k ${Math.floor(usage.used / 10)}% · 88% cached · ⚠ auto-compacts at 50%`);
  assert.deepEqual(errors, []);
});

test("the header's model button shows the model and opens the picker", async () => {
  const { page, post, posted, errors } = await open({ width: 360, height: 500 });
  await post({ type: "session", sessionId: "s", cwd: `/home/me/${"long-folder/".repeat(12)}`, provider: "openai", model: "gpt-4o-mini" });
  await page.waitForSelector("#model:not([hidden])");
  assert.equal(await page.textContent("#model"), "gpt-4o-mini ▾");
  assert.match(await page.getAttribute("#model", "title"), /openai · gpt-4o-mini/);
  const [box, width] = await page.evaluate(() => [document.querySelector("#model").getBoundingClientRect().toJSON(), window.innerWidth]);
  assert.ok(box.left >= 0 && box.right <= width, `the model button is out of view: ${JSON.stringify(box)}`);
  await page.click("#model");
  assert.deepEqual((await posted()).at(-1), { type: "pickModel" });
  assert.deepEqual(errors, []);
});

test("a long unbroken line wraps in its bubble: no horizontal scrollbar on the log", async () => {
  const { page, post, errors } = await open({ width: 360, height: 600 });
  const long = "x".repeat(400);
  await post(
    { type: "user", text: `look at https://example.invalid/${long}` },
    { type: "saying", turnId: 1, text: `the word ${long} and \`${long}\`\n\n| a | b |\n|---|---|\n| ${long} | y |\n` },
    { type: "say", turnId: 1, kind: "info", text: long },
    { type: "turnEnd", turnId: 1, reply: "", stopReason: "end_turn" },
    { type: "command", line: `/context ${long}` },
    { type: "commandOutput", line: "/x", output: long },
  );
  await page.waitForFunction(() => document.querySelector(".turn.assistant .markdown code"));
  const [scrollWidth, clientWidth] = await page.evaluate(() => [document.querySelector("#log").scrollWidth, document.querySelector("#log").clientWidth]);
  assert.ok(scrollWidth <= clientWidth, `the log scrolls sideways: ${scrollWidth} > ${clientWidth}`);
  assert.deepEqual(errors, []);
});

test("a chat redrawn while its view is hidden opens at its end once shown (Reload Window)", async () => {
  const { page, post, errors } = await open({ width: 360, height: 400 });
  await page.evaluate(() => (document.body.style.display = "none")); // the view not laid out yet
  const messages = [];
  for (let i = 0; i < 30; i++) messages.push({ role: "user", content: `question ${i}` }, { role: "assistant", content: `answer ${i}\n\nmore text` });
  await post({ type: "clear" }, { type: "history", messages }, { type: "say", kind: "info", text: "Resumed the session" }, { type: "scrollEnd" });
  await page.evaluate(() => (document.body.style.display = ""));
  // then session/checkpoints gives each prompt its Restore action: the log grows, still at its end
  await post({ type: "turns", turns: Array.from({ length: 30 }, (_, i) => ({ turnId: i + 1, prompt: `question ${i}` })) });
  await page.waitForFunction(() => document.querySelectorAll("button.restore").length === 30);
  await page.waitForFunction(() => {
    const log = document.querySelector("#log");
    return log.scrollHeight > log.clientHeight * 2 && log.scrollHeight - log.scrollTop - log.clientHeight < 2;
  }, null, { timeout: 5000 });
  // the user scrolls up: new lines then leave the view where it is
  await page.evaluate(() => document.querySelector("#log").scrollTo(0, 0));
  await page.waitForTimeout(50);
  await post({ type: "command", line: "/later" });
  assert.equal(await page.evaluate(() => document.querySelector("#log").scrollTop), 0);
  assert.deepEqual(errors, []);
});

test("a failed tool call looks failed: list of a missing path (exit 2) is red, not a green ok (real daemon)", async () => {
  const messages = await recorded(async (view) => {
    await send(view, '!tool list {"path":"no-such-folder"}');
    await send(view, '!tool grep {"pattern":"nothing-matches-this-zzz"}');
  });
  const results = messages.filter((m) => m.type === "result");
  assert.deepEqual(results.map((m) => [m.name, m.ok]), [["list", false], ["grep", true]], JSON.stringify(results));
  const { page, post, errors } = await open();
  await post(...messages);
  await page.waitForSelector("details.tool.error");
  const cards = page.locator("details.tool");
  assert.deepEqual(await cards.locator(".status").allTextContents(), ["error", "ok"]);
  assert.deepEqual(await cards.locator(".exit").allTextContents(), ["✗ exit 2"], "the failed call's exit status, and none on grep's expected exit 1");
  const [red, green] = await page.evaluate(() => [...document.querySelectorAll("details.tool .status")].map((s) => getComputedStyle(s).color));
  assert.notEqual(red, green, "the failed call has the passed call's colour");
  assert.deepEqual(errors, []);
});
