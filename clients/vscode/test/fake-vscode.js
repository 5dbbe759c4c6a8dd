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
  static parse(text) {
    const uri = new Uri(text);
    uri.text = text;
    uri.toString = () => text;
    return uri;
  }
  static from({ scheme, path: p, query = "" }) {
    const uri = new Uri(p);
    uri.scheme = scheme;
    uri.query = query;
    return uri;
  }
  toString() {
    return `${this.scheme}://${this.fsPath}${this.query ? `?${this.query}` : ""}`;
  }
}

/** A position is an offset in the fake (documents convert with positionAt). */
class Position {
  constructor(line, character, offset) {
    this.line = line;
    this.character = character;
    this.offset = offset;
  }
}

class Range {
  constructor(a, b, c, d) {
    if (typeof a === "number") [a, b] = [new Position(a, b), new Position(c, d)];
    this.start = a;
    this.end = b;
  }
}

class CodeLens {
  constructor(range, command) {
    this.range = range;
    this.command = command;
  }
}

class WorkspaceEdit {
  constructor() {
    this.edits = [];
  }
  replace(uri, range, text) {
    this.edits.push({ uri, range, text });
  }
}

/** An open text document: `fake.open(path, text)`; `undo()` takes back one applied edit. */
class FakeDocument {
  constructor(fsPath, text) {
    this.uri = Uri.file(fsPath);
    this.text = text;
    this.version = 1;
    this.isClosed = false;
    this.isDirty = false;
    this.languageId = "plaintext";
    this.undos = [];
    this.saved = 0;
  }
  getText() {
    return this.text;
  }
  positionAt(offset) {
    return new Position(undefined, undefined, Math.max(0, Math.min(offset, this.text.length)));
  }
  type(text) {
    this.text = text;
    this.version++;
    this.isDirty = true;
  }
  undo() {
    this.text = this.undos.pop();
    this.version++;
    this.isDirty = true;
  }
  async save() {
    this.saved++;
    require("fs").writeFileSync(this.uri.fsPath, this.text);
    this.isDirty = false;
    return true;
  }
}

/** The webview of the chat view: `posted` holds what the extension sent it. */
class FakeWebviewView {
  constructor() {
    this.visible = true; // a test hides it (the user closed the side bar)
    this.badge = undefined; // what VS Code shows on the view's icon
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
  textDocuments: [],
  applied: [], // the WorkspaceEdits applied, one per undo step
  executed: [], // [id, ...args] of executeCommand calls to VS Code's own commands
  written: [], // workspace.fs.writeFile calls: [fsPath, text]
  contentProviders: new Map(),
  diagnostics: new Map(), // fsPath -> [{range, severity, message, source}]
  opened: [], // env.openExternal
  shown: [], // window.showTextDocument
  statusItems: [], // window.createStatusBarItem
  editorState: [], // not the fake's: tests read what the daemon got
  /** A document the editor has open (unsaved text allowed). */
  open(fsPath, text) {
    const document = new FakeDocument(fsPath, text);
    // dirty when it differs from the disk, as VS Code's would be (issue 31 saves only clean ones)
    let disk;
    try {
      disk = require("fs").readFileSync(fsPath, "utf8");
    } catch {
      disk = undefined;
    }
    document.isDirty = disk !== text;
    this.textDocuments.push(document);
    return document;
  },
  logLines: [],
  trusted: true,
  workspaceFolder: undefined,
  activeTextEditor: undefined,
  grantTrust: new EventEmitter(),
  activeEditorChanged: new EventEmitter(),
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
    this.textDocuments = [];
    this.applied = [];
    this.executed = [];
    this.written = [];
    this.contentProviders.clear();
    this.diagnostics.clear();
    this.opened = [];
    this.shown = [];
    this.statusItems = [];
    this.logLines = [];
    this.trusted = true;
    this.workspaceFolder = undefined;
    this.activeTextEditor = undefined;
  },
};

function answer(kind, what, options, token) {
  fake.asked.push({ kind, what, options, token });
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
  Position,
  Range,
  CodeLens,
  WorkspaceEdit,
  ViewColumn: { Active: -1, Beside: -2, One: 1 },
  StatusBarAlignment: { Left: 1, Right: 2 },
  QuickPickItemKind: { Separator: -1, Default: 0 },
  window: {
    createOutputChannel: (name) => logChannel(name),
    createStatusBarItem(alignment, priority) {
      const item = { alignment, priority, text: "", tooltip: "", command: undefined, visible: false,
        show() { this.visible = true; }, hide() { this.visible = false; }, dispose() { this.visible = false; } };
      fake.statusItems.push(item);
      return item;
    },
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
    showWarningMessage: async (text, ...rest) => {
      const options = rest[0] && typeof rest[0] === "object" ? rest.shift() : undefined;
      fake.messages.push(options?.detail === undefined ? ["warning", text] : ["warning", text, options.detail]);
      const next = rest.length ? fake.answers.shift() : undefined;
      return next ? next("warning", rest, options) : undefined;
    },
    showErrorMessage: async (text) => void fake.messages.push(["error", text]),
    showTextDocument: async (document) => {
      fake.shown.push(document);
      return { document };
    },
    get activeTextEditor() {
      return fake.activeTextEditor;
    },
    onDidChangeActiveTextEditor: (listener) => fake.activeEditorChanged.event(listener),
  },
  env: {
    openExternal: async (uri) => void fake.opened.push(String(uri)),
  },
  DiagnosticSeverity: { Error: 0, Warning: 1, Information: 2, Hint: 3 },
  languages: {
    getDiagnostics: (uri) => fake.diagnostics.get(uri.fsPath) ?? [],
    registerCodeLensProvider: (selector, provider) => {
      fake.codeLenses = provider;
      return new Disposable();
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
      if (id === "workbench.action.files.revert") {
        // File: Revert File reloads the active document from the disk. As in VS Code, the
        // command resolves before the extension host's document has the disk's text.
        const document = fake.shown.at(-1);
        if (document && !document.isClosed) {
          setTimeout(() => {
            try {
              document.text = require("fs").readFileSync(document.uri.fsPath, "utf8");
            } catch {
              return;
            }
            document.version++;
            document.isDirty = false;
          }, 30);
        }
      }
      if (id.startsWith("vscode.") || id.startsWith("workbench.")) return void fake.executed.push([id, ...args]);
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
    get textDocuments() {
      return fake.textDocuments;
    },
    async applyEdit(edit) {
      const byDoc = new Map();
      for (const e of edit.edits) {
        const document = fake.textDocuments.find((d) => d.uri.fsPath === e.uri.fsPath);
        if (!document) return false;
        if (!byDoc.has(document)) byDoc.set(document, []);
        byDoc.get(document).push(e);
      }
      for (const [document, edits] of byDoc) {
        document.undos.push(document.text);
        let text = document.text;
        for (const e of [...edits].sort((x, y) => y.range.start.offset - x.range.start.offset)) {
          text = text.slice(0, e.range.start.offset) + e.text + text.slice(e.range.end.offset);
        }
        document.text = text;
        document.version++;
        document.isDirty = true;
      }
      fake.applied.push(edit);
      return true;
    },
    fs: {
      async writeFile(uri, bytes) {
        fake.written.push([uri.fsPath, Buffer.from(bytes).toString("utf8")]);
        require("fs").writeFileSync(uri.fsPath, bytes);
      },
    },
    registerTextDocumentContentProvider(scheme, provider) {
      fake.contentProviders.set(scheme, provider);
      return new Disposable(() => fake.contentProviders.delete(scheme));
    },
    onDidChangeConfiguration: fake.configurationChanged.event,
    asRelativePath(uri) {
      const p = typeof uri === "string" ? uri : uri.fsPath;
      return fake.workspaceFolder ? path.relative(fake.workspaceFolder, p) : p;
    },
    async openTextDocument(options) {
      // An untitled document: `type(text)` stands for the user editing it.
      const n = fake.documents.length + 1;
      const document = {
        ...options,
        uri: { scheme: "untitled", fsPath: `Untitled-${n}`, toString: () => `untitled:Untitled-${n}` },
        getText: () => document.content,
        type: (text) => void (document.content = text),
      };
      fake.documents.push(document);
      return document;
    },
  },
  fake,
};

module.exports = vscode;
