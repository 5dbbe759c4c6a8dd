// The editor's side of "Files: reads and changes through the editor" (protocol.md):
// `files/read` and `files/propose`, and ACP's `fs/read_text_file` / `fs/write_text_file`.
// Reads serve the open document's text (unsaved changes included); a change lands in the
// document as one WorkspaceEdit (one undo step), after a review when the daemon asks for one.
import * as vscode from "vscode";
import { ResponseError } from "vscode-jsonrpc/node";
import { applyHunks, replacements } from "./hunks";
import type { Log } from "./log";
import type { Decision, ProposeParams, Reviews } from "./review";

/** ACP's "resource not found": the editor has no buffer of that file. */
export const RESOURCE_NOT_FOUND = -32002;

export interface ProposeResult {
  outcome: "accepted" | "partial" | "rejected" | "conflict";
  acceptedHunks?: number[];
  text?: string;
  applied?: boolean;
  reason?: string;
  acceptAllForTurn?: boolean;
}

/** The open text document of an absolute path, if VS Code has one. */
export function openDocument(fsPath: unknown): vscode.TextDocument | undefined {
  if (typeof fsPath !== "string" || !fsPath) return undefined;
  return vscode.workspace.textDocuments.find((d) => d.uri.scheme === "file" && d.uri.fsPath === fsPath && !d.isClosed);
}

/** `files/read`: `{text, version}` of an open document, unsaved changes included; null when not open. */
export function readFile(params: { path?: unknown }): { text: string; version: number } | null {
  const document = openDocument(params?.path);
  return document ? { text: document.getText(), version: document.version } : null;
}

/** `fs/read_text_file`: the open document's text, or -32002 so the daemon reads the disk. */
export function readTextFile(params: { path?: unknown }): { content: string } {
  const document = openDocument(params?.path);
  if (!document) throw new ResponseError(RESOURCE_NOT_FOUND, `not open in the editor: ${String(params?.path)}`);
  return { content: document.getText() };
}

/** `fs/write_text_file`: the whole new text into the open document (one undo step), else the disk. */
export async function writeTextFile(params: { path?: unknown; content?: unknown }): Promise<null> {
  if (typeof params?.path !== "string" || typeof params.content !== "string") {
    throw new ResponseError(-32602, "fs/write_text_file takes a string path and content");
  }
  const document = openDocument(params.path);
  if (document) {
    const wasDirty = document.isDirty;
    if (!(await replaceAll(document, params.content))) throw new Error(`VS Code refused the edit of ${params.path}`);
    await settle(document, wasDirty);
    return null;
  }
  await vscode.workspace.fs.writeFile(vscode.Uri.file(params.path), Buffer.from(params.content, "utf8"));
  return null;
}

/** What became of an applied change on the disk, for the chat (not sent to the daemon). */
export interface Landed {
  /** the document stays unsaved: it also held the user's own unsaved edits (or saving is off) */
  unsaved?: "userEdits" | "setting" | "failed";
}

/** `files/propose`: conflict first, then the review (or none), then one edit of the document, then saved (`settle`). */
export async function propose(params: ProposeParams, reviews: Reviews, token: vscode.CancellationToken, log: Log, landed: Landed = {}): Promise<ProposeResult | null> {
  if (typeof params?.path !== "string" || typeof params.newText !== "string" || !Array.isArray(params.hunks)) {
    throw new ResponseError(-32602, "files/propose: path, newText and hunks are required");
  }
  const oldText = params.oldText ?? "";
  const document = openDocument(params.path);
  if (document && document.getText() !== oldText) return { outcome: "conflict" };
  const all = params.hunks.map((h) => h.id);
  let decision: Decision | undefined = { accepted: all };
  if (params.review) {
    decision = await reviews.review(params, document, token);
    if (decision === undefined || token.isCancellationRequested) return null; // withdrawn: change nothing
  }
  const accepted = all.filter((id) => decision!.accepted.includes(id));
  const extra = {
    ...(decision.reason ? { reason: decision.reason } : {}),
    ...(decision.acceptAllForTurn ? { acceptAllForTurn: true } : {}),
  };
  if (accepted.length === 0) return { outcome: "rejected", acceptedHunks: [], ...extra };
  const outcome = accepted.length === all.length ? "accepted" : "partial";
  const text = applyHunks(oldText, params.newText, params.hunks, accepted);
  // The user may have typed into the document (or opened it) while reviewing.
  const now = openDocument(params.path);
  if (now && now.getText() !== oldText) return { outcome: "conflict" };
  if (!now) return { outcome, acceptedHunks: accepted, text, applied: false, ...extra };
  const wasDirty = now.isDirty;
  const edit = new vscode.WorkspaceEdit();
  for (const r of replacements(oldText, params.newText, params.hunks, accepted)) {
    edit.replace(now.uri, new vscode.Range(now.positionAt(r.start), now.positionAt(r.end)), r.text);
  }
  if (!(await vscode.workspace.applyEdit(edit)) || now.getText() !== text) {
    log.warn(`files/propose: VS Code did not apply the change to ${params.path} as proposed`);
    throw new Error(`VS Code refused the edit of ${params.path}`);
  }
  const unsaved = await settle(now, wasDirty, log);
  if (unsaved) landed.unsaved = unsaved;
  return { outcome, acceptedHunks: accepted, text, applied: true, ...extra };
}

async function replaceAll(document: vscode.TextDocument, text: string): Promise<boolean> {
  const edit = new vscode.WorkspaceEdit();
  edit.replace(document.uri, new vscode.Range(document.positionAt(0), document.positionAt(document.getText().length)), text);
  return vscode.workspace.applyEdit(edit);
}

/**
 * After the agent's change landed in `document` (protocol.md, "Files": what the model is told
 * is true on disk): `elelem.saveAppliedEdits` "whenClean" (the default) saves it when it held
 * no unsaved edits of the user's before the change, so the agent's next command sees the
 * change; a document that did is left unsaved (the user's edits are theirs to save), and the
 * daemon, which checks the disk, tells the model so. "always" saves it anyway, "never" never
 * (booleans of older settings: true is "always", false "never"). Why it stayed unsaved, if it did.
 */
export async function settle(document: vscode.TextDocument, wasDirty: boolean, log?: Log): Promise<Landed["unsaved"]> {
  const setting = vscode.workspace.getConfiguration("elelem").get<unknown>("saveAppliedEdits", "whenClean");
  const mode = setting === true ? "always" : setting === false ? "never" : setting === "always" || setting === "never" ? setting : "whenClean";
  if (mode === "never") return "setting";
  if (mode === "whenClean" && wasDirty) return "userEdits";
  try {
    if (await document.save()) return undefined;
  } catch (error) {
    log?.warn(`could not save ${document.uri.fsPath}: ${(error as Error).message}`);
  }
  return "failed";
}
