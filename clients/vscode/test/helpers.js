// Test plumbing: route require("vscode") to the fake, activate the bundled extension,
// and wait for what the extension posts to the webview.
"use strict";
const Module = require("module");
const fs = require("fs");
const os = require("os");
const path = require("path");

const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  return request === "vscode" ? require.resolve("./fake-vscode.js") : resolve.call(this, request, ...rest);
};

const vscode = require("vscode");
const extension = require("../dist/extension.js");
const { fake } = vscode;

const ROOT = path.resolve(__dirname, "..");
const REPO = path.resolve(ROOT, "../..");
const TIMEOUT = 15000;

/** The real daemon: the repository's venv python, unless ELELEM_TEST_COMMAND says otherwise. */
function daemonCommand() {
  if (process.env.ELELEM_TEST_COMMAND) return process.env.ELELEM_TEST_COMMAND;
  const python = path.join(REPO, ".venv/bin/python");
  return `"${fs.existsSync(python) ? python : "python3"}" -m elelem_daemon`;
}

/**
 * The daemon's environment for tests: its own HOME, state dir (stored sessions), config dir
 * (whose permissions file allows `execute`, so tool-call tests need no approval), data and
 * cache dirs. No test reads or writes the user's real ones (test.sh checks).
 */
const HOME = fs.mkdtempSync(path.join(os.tmpdir(), "elelem-vscode-home-"));
fs.mkdirSync(path.join(HOME, "config/elelem"), { recursive: true });
fs.writeFileSync(path.join(HOME, "config/elelem/permissions"), "execute allow\n");
const DAEMON_ENV = {
  HOME,
  ELELEM_STATE_DIR: path.join(HOME, "state/elelem"),
  XDG_STATE_HOME: path.join(HOME, "state"),
  XDG_CONFIG_HOME: path.join(HOME, "config"),
  XDG_DATA_HOME: path.join(HOME, "data"),
  XDG_CACHE_HOME: path.join(HOME, "cache"),
};

/** `context.workspaceState`: kept across activations when a test passes the same one (a window reload). */
class Memento {
  constructor() {
    this.values = new Map();
  }
  get(key, fallback) {
    return this.values.has(key) ? this.values.get(key) : fallback;
  }
  async update(key, value) {
    if (value === undefined) this.values.delete(key);
    else this.values.set(key, value);
  }
  keys() {
    return [...this.values.keys()];
  }
}

/** A fresh workspace folder (so no stray .agents/plugins get loaded). */
function workspace() {
  return fs.mkdtempSync(path.join(os.tmpdir(), "elelem-vscode-ws-"));
}

async function activate(settings = {}, options = {}) {
  fake.reset();
  fake.workspaceFolder = options.workspace ?? workspace();
  fake.trusted = options.trusted ?? true;
  // No prestart unless a test asks for it: most tests see the daemon start with a message.
  fake.settings = { "elelem.command": daemonCommand(), "elelem.provider": "stub", "elelem.env": DAEMON_ENV, "elelem.prestart": false, ...settings };
  const context = {
    subscriptions: [],
    extensionUri: vscode.Uri.file(ROOT),
    extension: { packageJSON: require("../package.json") },
    workspaceState: options.workspaceState ?? new Memento(),
  };
  const chat = extension.activate(context);
  await vscode.commands.executeCommand("elelem.openChat");
  return { chat, context, view: fake.view };
}

async function deactivate(context) {
  await extension.deactivate();
  for (const disposable of context.subscriptions) disposable.dispose();
}

/** Resolve with the first posted message (from index `from`) that matches. */
function waitFor(view, match, { from = 0, timeout = TIMEOUT } = {}) {
  const test = typeof match === "function" ? match : (m) => Object.entries(match).every(([k, v]) => m[k] === v);
  return new Promise((resolve, reject) => {
    for (let i = from; i < view.posted.length; i++) if (test(view.posted[i])) return resolve(view.posted[i]);
    const timer = setTimeout(() => {
      view.bus.off("message", listener);
      reject(new Error(`timed out waiting for ${match}; posted:\n${view.posted.map((m) => JSON.stringify(m)).join("\n")}`));
    }, timeout);
    const listener = (message) => {
      if (!test(message)) return;
      clearTimeout(timer);
      view.bus.off("message", listener);
      resolve(message);
    };
    view.bus.on("message", listener);
  });
}

/** Send text from the webview and wait for the turn's end (or a command's output, or an error). */
async function send(view, text, end = (m) => ["turnEnd", "commandOutput", "error", "daemonExited"].includes(m.type)) {
  const from = view.posted.length;
  view.receive({ type: "send", text });
  const last = await waitFor(view, end, { from });
  await waitFor(view, { type: "busy", busy: false }, { from });
  return { last, posted: view.posted.slice(from) };
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function until(predicate, timeout = TIMEOUT) {
  const start = Date.now();
  while (!predicate()) {
    if (Date.now() - start > timeout) throw new Error(`timed out waiting for ${predicate}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

module.exports = { DAEMON_ENV, Memento, vscode, fake, extension, activate, deactivate, waitFor, send, alive, until, workspace, daemonCommand, ROOT, REPO };
