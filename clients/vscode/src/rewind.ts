// Checkpoints (protocol.md `session/checkpoints`, `session/rewind`; docs/checkpoints.md):
// a dry run, a modal confirmation naming what changes (each deleted file by the turn that
// created it, what is left as it is and why, the user's own files and unsaved documents at
// risk), the rewind with `confirm` naming exactly the files the user agreed to lose (never
// `force`: a file changed meanwhile is asked about again), then the open documents restored.
// The chat redraws itself from the answer's `messages` (chat.ts).
import * as fs from "fs";
import * as path from "path";
import * as vscode from "vscode";
import type { Daemon } from "./daemon";
import type { Log } from "./log";
import { linesNamed, merge3 } from "./merge";
import { ErrorKind, Message, Method, errorText, isKind } from "./protocol";
import { ResponseError } from "vscode-jsonrpc/node";

export interface CheckpointTurn {
  turnId: number;
  /** the turn as the user counts them (1, 2, 3 among the kept turns); older daemons: absent */
  number?: number;
  prompt: string;
  at: string;
  checkpoint: "git" | "copy" | "lost" | null;
  ended: boolean;
  files: string[];
  filesTotal: number;
}

export interface FilesPlan {
  kind: "git" | "copy" | "none";
  fromTurn: number | null;
  restored: string[];
  created: string[];
  deleted: string[];
  dirsCreated: string[];
  dirsRemoved: string[];
  outside: string[];
  unsaved: string[];
  uncovered: string[];
  /** each deleted file: the undone turn (turnId) that created it */
  createdBy?: Record<string, number>;
  /** left exactly as they are: no checkpoint holds them, and why (when turn `turn` began) */
  kept?: { path: string; reason: string; turn: number }[];
}

/** A change the client applied to a document in a turn: the text before and after it. */
export interface AppliedEdit {
  path: string;
  before: string;
  after: string;
}

export interface RewindResult {
  turnId: number;
  dryRun: boolean;
  files: FilesPlan | null;
  conversation: { dropped: number[] } | null;
  messages?: Message[];
}

/** Why a checkpoint cannot be used (`no_checkpoint`'s `data.reason`), as the user reads it. */
const NO_CHECKPOINT: Record<string, string> = {
  disabled: "checkpoints are turned off (ELELEM_CHECKPOINTS=0)",
  pruned: "its checkpoint was pruned (only the most recent ones are kept)",
  failed: "its checkpoint failed when the turn ran",
  missing: "its checkpoint is gone or broken",
  tampered: "its checkpoint names another turn (it was tampered with)",
};

export async function checkpoints(daemon: Daemon, sessionId: string): Promise<{ enabled: boolean; turns: CheckpointTurn[] }> {
  return daemon.request(Method.sessionCheckpoints, { sessionId });
}

/**
 * Rewind to before `turnId`, after the user confirmed. Resolves with the result (its
 * `messages` redraw the chat), or undefined when the user declined or it failed (said).
 */
export async function rewindTurn(daemon: Daemon, sessionId: string, cwd: string, turnId: number, log: Log, turnFiles: string[] = [], edits: AppliedEdit[] = [], numberOf: (turnId: number) => number = (id) => id): Promise<RewindResult | undefined> {
  const shown = numberOf(turnId); // the turn as the user counts them
  let files = true;
  let plan: RewindResult;
  try {
    plan = await daemon.request<RewindResult>(Method.sessionRewind, { sessionId, turnId, dryRun: true });
  } catch (error) {
    if (!isKind(error, "no_checkpoint")) return void (await explain(error, shown));
    const reason = (error as ResponseError<{ reason?: string }>).data?.reason ?? "";
    const choice = await vscode.window.showWarningMessage(
      `Elelem cannot restore the files of turn ${shown}: ${NO_CHECKPOINT[reason] ?? reason ?? "no checkpoint"}.`,
      { modal: true, detail: "You can still rewind the conversation alone: the files stay as they are." },
      "Rewind the Conversation Only",
    );
    if (choice !== "Rewind the Conversation Only") return undefined;
    files = false;
    try {
      plan = await daemon.request<RewindResult>(Method.sessionRewind, { sessionId, turnId, files: false, dryRun: true });
    } catch (again) {
      return void (await explain(again, shown));
    }
  }
  // Unsaved documents of the files the rewind touches or the undone turns changed (an
  // applied change left unsaved lives only in its document): the user chooses. The rewind
  // then names in `confirm` exactly the files the user saw at risk; if another one changed
  // meanwhile the daemon refuses (`outside_changes`), and the new plan is asked again.
  const DISCARD = "Restore and Discard Unsaved Changes";
  let result: RewindResult | undefined;
  let choice: string | undefined;
  let dirty: vscode.TextDocument[] = [];
  let before = new Map<string, string | undefined>();
  for (let asked = 0; !result; asked++) {
    dirty = dirtyDocuments([...touched(plan.files), ...turnFiles, ...edits.map((e) => e.path)], cwd);
    const again = asked ? "Your files changed since the last question: this is the plan now.\n" : "";
    choice = await vscode.window.showWarningMessage(
      `Restore the checkpoint before turn ${shown}?`,
      { modal: true, detail: again + describe(plan, dirty.map((d) => vscode.workspace.asRelativePath(d.uri)), numberOf) },
      ...(dirty.length ? ["Restore", DISCARD] : ["Restore"]),
    );
    if (choice !== "Restore" && choice !== DISCARD) return undefined;
    before = choice === DISCARD ? new Map<string, string | undefined>() : await diskTexts(dirty);
    const confirm = lost(plan.files);
    try {
      result = await daemon.request<RewindResult>(Method.sessionRewind, { sessionId, turnId, files, ...(confirm.length ? { confirm } : {}) });
    } catch (error) {
      if (!isKind(error, "outside_changes") || asked >= 4) return void (await explain(error, shown));
      try {
        plan = await daemon.request<RewindResult>(Method.sessionRewind, { sessionId, turnId, files, dryRun: true });
      } catch (again) {
        return void (await explain(again, shown));
      }
    }
  }
  if (choice === DISCARD) await reloadDocuments(result.files, cwd, log, dirty);
  else if (files) await restoreDocuments(result.files, cwd, log, edits, before);
  return result;
}

/** The confirmation's details: what is restored, created, deleted, and what is at risk. */
export function describe(plan: RewindResult, dirty: string[], numberOf: (turnId: number) => number = (id) => id): string {
  const lines: string[] = [];
  const list = (title: string, names: string[] | undefined) => {
    if (names?.length) lines.push(`${title}: ${names.slice(0, 20).join(", ")}${names.length > 20 ? ` and ${names.length - 20} more` : ""}`);
  };
  const f = plan.files;
  if (!f) lines.push("The files stay as they are: only the conversation is rewound.");
  else if (f.kind === "none") lines.push("No file changed since that turn: only the conversation is rewound.");
  else {
    list("Restored", f.restored);
    list("Brought back", f.created);
    const byTurn = new Map<number | undefined, string[]>();
    for (const name of f.deleted) {
      const turn = f.createdBy?.[name];
      const key = typeof turn === "number" ? turn : undefined;
      byTurn.set(key, [...(byTurn.get(key) ?? []), name]);
    }
    for (const turn of [...byTurn.keys()].filter((t): t is number => t !== undefined).sort((a, b) => a - b)) {
      list(`Created by turn ${numberOf(turn)} (deleted)`, byTurn.get(turn));
    }
    list("Made since, not by the agent's turns (deleted)", byTurn.get(undefined));
    list("Folders made again", f.dirsCreated);
    list("Folders removed", f.dirsRemoved);
    list("⚠ You lose your edits (changed outside the agent since)", f.outside);
    list("⚠ You lose their current content (no checkpoint holds it)", f.unsaved);
    list("Left as they are (not saved)", f.uncovered);
    const kept = new Map<string, string[]>();
    for (const k of Array.isArray(f.kept) ? f.kept : []) {
      const why = (KEPT[k.reason] ?? "not saved").replace("{turn}", String(numberOf(k.turn)));
      kept.set(why, [...(kept.get(why) ?? []), String(k.path)]);
    }
    for (const [why, names] of kept) list(`Left as they are (no checkpoint holds them), ${why}`, names);
    if (f.kind === "copy") lines.push("Without git, what commands changed is not restored.");
  }
  list("Unsaved in the editor (Restore takes the turn's changes out of them and keeps your own unsaved edits; Discard reverts them to the disk)", dirty);
  if (plan.conversation) lines.push(`The conversation loses turn${plan.conversation.dropped.length === 1 ? "" : "s"} ${plan.conversation.dropped.map(numberOf).join(", ")}.`);
  return lines.join("\n");
}

/** A `kept` entry's reason in words. */
const KEPT: Record<string, string> = {
  ignored: "ignored when turn {turn} began",
  too_big: "over the size limit when turn {turn} began",
  nested: "inside a nested repository when turn {turn} began",
  unlisted: "the checkpoint of turn {turn} could not list all it left out",
};

/** The user's files a rewind of `plan` would lose (`outside` and `unsaved`): what `confirm` names. */
export function lost(plan: FilesPlan | null): string[] {
  return plan ? [...new Set([...(plan.outside ?? []), ...(plan.unsaved ?? [])])] : [];
}

function touched(plan: FilesPlan | null): string[] {
  return plan ? [...plan.restored, ...plan.created, ...plan.deleted] : [];
}

function dirtyDocuments(names: string[], cwd: string): vscode.TextDocument[] {
  const files = new Set(names.map((f) => path.resolve(cwd, f)));
  return vscode.workspace.textDocuments.filter((d) => d.uri.scheme === "file" && d.isDirty && files.has(d.uri.fsPath));
}

/** Open documents of the rewound files show the disk again: reverted, unless unsaved (or `discard` names them). */
async function reloadDocuments(plan: FilesPlan | null, cwd: string, log: Log, discard: vscode.TextDocument[]): Promise<void> {
  const files = new Set(touched(plan).map((f) => path.resolve(cwd, f)));
  const active = vscode.window.activeTextEditor?.document;
  for (const document of vscode.workspace.textDocuments) {
    if (document.uri.scheme !== "file" || document.isClosed) continue;
    if (!discard.includes(document) && (document.isDirty || !files.has(document.uri.fsPath))) continue;
    try {
      await vscode.window.showTextDocument(document, { preserveFocus: false, preview: false });
      await vscode.commands.executeCommand("workbench.action.files.revert");
    } catch (error) {
      log.warn(`rewind: could not reload ${document.uri.fsPath}: ${errorText(error)}`);
    }
  }
  if (active && !active.isClosed) await Promise.resolve(vscode.window.showTextDocument(active)).catch(() => undefined);
}

/** The disk's text of each document, before the rewind changes the disk. */
async function diskTexts(documents: vscode.TextDocument[]): Promise<Map<string, string | undefined>> {
  const out = new Map<string, string | undefined>();
  for (const d of documents) out.set(d.uri.fsPath, await readDisk(d.uri));
  return out;
}

/** The disk's text of a file (bounded: past 32 MiB, undefined, as for a file that cannot be read). */
async function readDisk(uri: vscode.Uri): Promise<string | undefined> {
  try {
    if ((await fs.promises.stat(uri.fsPath)).size > 32 * 1024 * 1024) return undefined;
    return await fs.promises.readFile(uri.fsPath, "utf8");
  } catch {
    return undefined;
  }
}

/**
 * After the rewind: each open document of the rewound files, and of the changes the undone
 * turns applied, shows what it showed before those turns. The undone changes are taken out
 * of its text (newest first), and so is what the restore changed on the disk; the user's
 * own unsaved edits stay. A document whose text is then the disk's is reloaded (saved, clean);
 * one with the user's edits keeps them, unsaved. Where the user's edits and the undone
 * changes touch the same lines, the user is asked once (those lines named).
 */
async function restoreDocuments(plan: FilesPlan | null, cwd: string, log: Log, edits: AppliedEdit[], before: Map<string, string | undefined>): Promise<void> {
  const files = new Set(touched(plan).map((f) => path.resolve(cwd, f)));
  for (const e of edits) files.add(e.path);
  const active = vscode.window.activeTextEditor?.document;
  for (const document of vscode.workspace.textDocuments) {
    if (document.uri.scheme !== "file" || document.isClosed || !files.has(document.uri.fsPath)) continue;
    const disk = await readDisk(document.uri);
    let text = document.getText();
    const conflicts: { first: number; last: number }[] = [];
    if (!document.isDirty) text = disk ?? text;
    else {
      for (const e of edits.filter((x) => x.path === document.uri.fsPath).reverse()) {
        const merged = merge3(e.after, text, e.before);
        if ("conflict" in merged) conflicts.push(...merged.conflict);
        else text = merged.text;
      }
      const old = before.get(document.uri.fsPath);
      if (old !== undefined && disk !== undefined) {
        const merged = merge3(old, text, disk);
        if ("conflict" in merged) conflicts.push(...merged.conflict);
        else text = merged.text;
      }
    }
    if (conflicts.length) {
      const name = vscode.workspace.asRelativePath(document.uri);
      const TAKE = "Take the Restored File";
      const choice = await vscode.window.showWarningMessage(
        `${name}: your unsaved edits and the undone turn changed the same ${linesNamed(conflicts)}.`,
        { modal: true, detail: "Keep My Unsaved Text leaves the document as it is (the disk is restored). Take the Restored File discards your unsaved edits there." },
        "Keep My Unsaved Text",
        TAKE,
      );
      if (choice !== TAKE) continue;
      text = disk ?? text;
    }
    try {
      if (disk !== undefined && text === disk) {
        if (document.getText() === disk && !document.isDirty) continue;
        await revert(document, disk);
      } else if (text !== document.getText() || (document.isDirty && disk !== undefined)) {
        if (document.isDirty && disk !== undefined) {
          // the daemon rewrote the file under this unsaved document: reload it from the disk
          // first (its unsaved edits are in `text`), so VS Code knows the disk's new version
          // and the next save is a save, not "the content of the file is newer" (issue 40)
          await revert(document, disk);
          if (text === document.getText()) continue;
        }
        const edit = new vscode.WorkspaceEdit();
        edit.replace(document.uri, new vscode.Range(document.positionAt(0), document.positionAt(document.getText().length)), text);
        await vscode.workspace.applyEdit(edit);
      }
    } catch (error) {
      log.warn(`rewind: could not restore ${document.uri.fsPath}: ${errorText(error)}`);
    }
  }
  if (active && !active.isClosed) await Promise.resolve(vscode.window.showTextDocument(active)).catch(() => undefined);
}

const sameText = (a: string, b: string) => a === b || a.replace(/\r\n/g, "\n") === b.replace(/\r\n/g, "\n");

/**
 * Reload a document from the disk (File: Revert File). Nothing promises that this extension
 * host's copy of the document has the disk's text when the command resolves; an edit
 * computed against the old text would then be overwritten or misplaced. So wait for the
 * text, bounded (5 s: then the edit goes on against what the document says).
 */
async function revert(document: vscode.TextDocument, disk: string): Promise<void> {
  await vscode.window.showTextDocument(document, { preserveFocus: false, preview: false });
  await vscode.commands.executeCommand("workbench.action.files.revert");
  const deadline = Date.now() + 5000;
  while ((document.isDirty || !sameText(document.getText(), disk)) && !document.isClosed && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Each `data.kind` of a refused rewind, in words. */
export function rewindError(error: unknown, turnId: number): string {
  const data = (error instanceof ResponseError ? error.data : undefined) as { kind?: string; reason?: string; files?: FilesPlan } | undefined;
  switch (data?.kind) {
    case ErrorKind.sessionBusy:
      return "Cannot rewind now: a turn is running (here or in another session of this folder). Stop it or wait, then try again.";
    case "unknown_turn":
      return `Turn ${turnId} is no longer in the conversation (an earlier rewind dropped it).`;
    case "outside_changes":
      return `Not rewound: files changed outside the agent since turn ${turnId} (${(data.files?.outside ?? []).join(", ")}).`;
    case "no_checkpoint":
      return `Cannot restore the files of turn ${turnId}: ${NO_CHECKPOINT[data.reason ?? ""] ?? data.reason}.`;
    case "checkpoint_failed":
      return `The restore failed (${data.reason ?? "unknown"}): nothing was changed.`;
    case "invalid_params":
      return `Elelem refused the rewind: ${errorText(error)}`;
    default:
      return `The rewind failed: ${errorText(error)}`;
  }
}

async function explain(error: unknown, turnId: number): Promise<void> {
  await vscode.window.showErrorMessage(rewindError(error, turnId));
}
