// The editor's context (protocol.md, "The editor's context"; docs/context.md): attachments
// built from the active editor (its file, its selection, its problems) and the debounced
// `editor/state` notification. Only shapes are made here; the daemon reads and caps them.
import * as vscode from "vscode";

export interface LspRange {
  start: { line: number; character: number };
  end: { line: number; character: number };
}

export interface Attachment {
  type: "file" | "selection" | "diagnostics" | "image";
  [key: string]: unknown;
}

/** An attachment and the chip's text for it. */
export interface Chip {
  attachment: Attachment;
  label: string;
}

const SEVERITY = ["error", "warning", "information", "hint"] as const;
export const EDITOR_STATE_DEBOUNCE_MS = 750;

export function lspRange(range: vscode.Range): LspRange {
  return {
    start: { line: range.start.line, character: range.start.character },
    end: { line: range.end.line, character: range.end.character },
  };
}

function diagnosticItem(d: vscode.Diagnostic, path?: string) {
  return {
    range: lspRange(d.range),
    severity: SEVERITY[d.severity] ?? "error",
    message: d.message,
    ...(d.source ? { source: d.source } : {}),
    ...(path ? { path } : {}),
  };
}

function lines(range: vscode.Range): string {
  const last = range.end.character === 0 && range.end.line > range.start.line ? range.end.line : range.end.line + 1;
  return `${range.start.line + 1}-${last}`;
}

/** An attachment from the active editor: its file, its selection, or its problems. */
export function fromEditor(what: string): Chip | string {
  const editor = vscode.window.activeTextEditor;
  if (!editor || editor.document.uri.scheme !== "file") return "Open a file in the editor first.";
  const document = editor.document;
  const path = document.uri.fsPath;
  const name = vscode.workspace.asRelativePath(document.uri);
  switch (what) {
    case "file":
      return { attachment: { type: "file", path }, label: name };
    case "selection": {
      const selection = editor.selection;
      if (selection.isEmpty) return "Select some code first.";
      return {
        attachment: { type: "selection", path, range: lspRange(selection), text: document.getText(selection) },
        label: `${name}:${lines(selection)}`,
      };
    }
    case "problems": {
      const diagnostics = vscode.languages.getDiagnostics(document.uri);
      if (diagnostics.length === 0) return `No problems in ${name}.`;
      return {
        attachment: { type: "diagnostics", path, items: diagnostics.map((d) => diagnosticItem(d)) },
        label: `${diagnostics.length} problem${diagnostics.length === 1 ? "" : "s"} in ${name}`,
      };
    }
    default:
      return `Unknown attachment: ${what}`;
  }
}

/** The whole `editor/state` now: the active file, its selection, visible lines and problems. */
export function editorState(): Record<string, unknown> {
  const editor = vscode.window.activeTextEditor;
  if (!editor || editor.document.uri.scheme !== "file") return { activeFile: null };
  const document = editor.document;
  const selection = editor.selection;
  const state: Record<string, unknown> = {
    activeFile: document.uri.fsPath,
    visibleRanges: (editor.visibleRanges ?? []).slice(0, 8).map(lspRange),
    diagnostics: vscode.languages.getDiagnostics(document.uri).slice(0, 20).map((d) => diagnosticItem(d)),
  };
  if (selection && !selection.isEmpty) state.selection = { range: lspRange(selection), text: document.getText(selection).slice(0, 4000) };
  return state;
}

/** Sends `editor/state` on a pause after the editor changed (never on every keystroke). */
export class EditorStateSender implements vscode.Disposable {
  private timer?: ReturnType<typeof setTimeout>;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(private readonly send: (state: Record<string, unknown>) => void, private readonly delay = EDITOR_STATE_DEBOUNCE_MS) {
    const w = vscode.window;
    const schedule = () => this.schedule();
    for (const event of [w.onDidChangeActiveTextEditor, w.onDidChangeTextEditorSelection, w.onDidChangeTextEditorVisibleRanges, vscode.languages.onDidChangeDiagnostics]) {
      if (event) this.disposables.push(event(schedule));
    }
  }

  schedule(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.send(editorState());
    }, this.delay);
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    for (const d of this.disposables) d.dispose();
  }
}
