// A fake `vscode` module: just the API the extension uses, recording what it is asked to do.
// Tests script the user's answers (`fake.answers`) and drive the webview (`fake.view`).
"use strict";
const path = require("path");
const { EventEmitter: NodeEmitter } = require("events");

class Disposable {
  constructor(dispose = () => {}) {
    this.dispose = dispose;
  }
}

class EventEmitter {
  constructor() {
    this.listeners = new Set();
    this.event = (listener) => {
      this.listeners.add(listener);
      return new Disposable(() => this.listeners.delete(listener));
    };
  }
  fire(value) {
    for (const listener of [...this.listeners]) listener(value);
  }
  dispose() {
    this.listeners.clear();
  }
}

class CancellationTokenSource {
  constructor() {
    const emitter = new EventEmitter();
    this.emitter = emitter;
    this.token = { isCancellationRequested: false, onCancellationRequested: emitter.event };
  }
  cancel() {
    if (this.token.isCancellationRequested) return;
    this.token.isCancellationRequested = true;
    this.emitter.fire();
  }
  dispose() {}
}

class Uri {
  constructor(fsPath) {
    this.scheme = "file";
    this.fsPath = fsPath;
    this.path = fsPath;
  }
  static file(fsPath) {
    return new Uri(fsPath);
  }
  static joinPath(base, ...parts) {
    return new Uri(path.join(base.fsPath, ...parts));
  }
  toString() {
    return `file://${this.fsPath}`;
  }
}

/** The webview of the chat view: `posted` holds what the extension sent it. */
class FakeWebviewView {
  constructor() {
    this.posted = [];
    this.bus = new NodeEmitter();
    this.receivers = new EventEmitter();
    this.disposeEmitter = new EventEmitter();
    this.onDidDispose = this.disposeEmitter.event;
    this.webview = {
      options: {},
      html: "",
      cspSource: "file:",
      asWebviewUri: (uri) => uri,
      postMessage: async (message) => {
        this.posted.push(message);
        this.bus.emit("message", message);
        return true;
      },
      onDidReceiveMessage: this.receivers.event,
    };
  }
  /** Simulate the webview posting to the extension. */
  receive(message) {
    this.receivers.fire(message);
  }
}

const fake = {
  commands: new Map(),
  viewProviders: new Map(),
  view: undefined,
  settings: {},
  answers: [], // functions (kind, items/options, options) => answer, used in order
  asked: [],
  messages: [], // [level, text] from show*Message
  documents: [],
  logLines: [],
  trusted: true,
  workspaceFolder: undefined,
  activeTextEditor: undefined,
  grantTrust: new EventEmitter(),
  configurationChanged: new EventEmitter(),
  /** Simulate a settings change. */
  changeSettings(settings) {
    Object.assign(this.settings, settings);
    const keys = Object.keys(settings);
    this.configurationChanged.fire({ affectsConfiguration: (section) => keys.some((k) => k === section || k.startsWith(`${section}.`)) });
  },
  reset() {
    this.commands.clear();
    this.viewProviders.clear();
    this.view = undefined;
    this.settings = {};
    this.answers = [];
    this.asked = [];
    this.messages = [];
    this.documents = [];
    this.logLines = [];
    this.trusted = true;
    this.workspaceFolder = undefined;
    this.activeTextEditor = undefined;
  },
};

function answer(kind, what, options, token) {
  fake.asked.push({ kind, what, options });
  const next = fake.answers.shift();
  if (!next) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    token?.onCancellationRequested?.(() => resolve(undefined));
    Promise.resolve(next(kind, what, options)).then(resolve);
  });
}

function logChannel(name) {
  const line = (level) => (text) => fake.logLines.push(`${level} ${text}`);
  return {
    name,
    info: line("info"),
    warn: line("warn"),
    error: line("error"),
    debug: line("debug"),
    trace: line("trace"),
    append: line("append"),
    appendLine: line("line"),
    show() {},
    dispose() {},
  };
}

const vscode = {
  Disposable,
  EventEmitter,
  CancellationTokenSource,
  Uri,
  ViewColumn: { Active: -1, Beside: -2, One: 1 },
  window: {
    createOutputChannel: (name) => logChannel(name),
    registerWebviewViewProvider(id, provider) {
      fake.viewProviders.set(id, provider);
      return new Disposable(() => fake.viewProviders.delete(id));
    },
    showInputBox: (options, token) => answer("input", options.prompt, options, token),
    showQuickPick: (items, options, token) => answer("pick", items, options, token),
    showInformationMessage: async (text, ...choices) => {
      fake.messages.push(["info", text]);
      const next = choices.length ? fake.answers.shift() : undefined;
      return next ? next("message", choices) : undefined;
    },
    showWarningMessage: async (text) => void fake.messages.push(["warning", text]),
    showErrorMessage: async (text) => void fake.messages.push(["error", text]),
    showTextDocument: async (document) => ({ document }),
    get activeTextEditor() {
      return fake.activeTextEditor;
    },
  },
  commands: {
    registerCommand(id, run) {
      if (fake.commands.has(id)) throw new Error(`command ${id} already registered`);
      fake.commands.set(id, run);
      return new Disposable(() => fake.commands.delete(id));
    },
    async executeCommand(id, ...args) {
      const view = /^(.*)\.focus$/.exec(id);
      if (view && fake.viewProviders.has(view[1])) {
        if (!fake.view) {
          fake.view = new FakeWebviewView();
          await fake.viewProviders.get(view[1]).resolveWebviewView(fake.view, {}, {});
          fake.view.receive({ type: "ready" });
        }
        return;
      }
      const run = fake.commands.get(id);
      if (!run) throw new Error(`command '${id}' not found`);
      return run(...args);
    },
  },
  workspace: {
    getConfiguration(section) {
      return {
        get(key, fallback) {
          const value = fake.settings[`${section}.${key}`];
          return value === undefined ? fallback : value;
        },
      };
    },
    get workspaceFolders() {
      return fake.workspaceFolder ? [{ uri: Uri.file(fake.workspaceFolder), name: "ws", index: 0 }] : undefined;
    },
    get isTrusted() {
      return fake.trusted;
    },
    onDidGrantWorkspaceTrust: fake.grantTrust.event,
    onDidChangeConfiguration: fake.configurationChanged.event,
    asRelativePath(uri) {
      const p = typeof uri === "string" ? uri : uri.fsPath;
      return fake.workspaceFolder ? path.relative(fake.workspaceFolder, p) : p;
    },
    async openTextDocument(options) {
      const document = { ...options, getText: () => options.content };
      fake.documents.push(document);
      return document;
    },
  },
  fake,
};

module.exports = vscode;
