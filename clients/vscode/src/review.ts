// Review of a `files/propose` with `review: true`: the native diff editor (the document, or
// its old text, against a read-only virtual document of the proposal), with accept / reject
// per hunk (CodeLens on the proposal, the chat's card, or "Choose Hunks…") and for all.
// The decision goes back to files.ts, which applies it; this module changes no document.
import * as path from "path";
import * as vscode from "vscode";
import type { Hunk } from "./hunks";

export const SCHEME = "elelem-review";

export interface ProposeParams {
  sessionId: string;
  turnId: number;
  toolCallId: string;
  path: string;
  review: boolean;
  oldText: string | null;
  newText: string;
  hunks: Hunk[];
  baseVersion: number | string | null;
}

/** What the user decided: the accepted hunk ids, and whether every later change of the turn is accepted. */
export interface Decision {
  accepted: number[];
  acceptAllForTurn?: boolean;
  reason?: string;
}

export type Action = "acceptAll" | "rejectAll" | "rejectWithReason" | "acceptAllForTurn" | "apply" | "acceptHunk" | "rejectHunk" | "open";

/** One change under review. */
export class Review {
  readonly decided = new Map<number, boolean>();
  readonly proposal: vscode.Uri;
  readonly original: vscode.Uri;
  private resolve!: (decision: Decision | undefined) => void;
  readonly done: Promise<Decision | undefined>;
  finished = false;

  constructor(
    readonly id: number,
    readonly params: ProposeParams,
    document: vscode.TextDocument | undefined,
  ) {
    this.proposal = vscode.Uri.from({ scheme: SCHEME, path: params.path, query: `proposal=${id}` });
    this.original = document?.uri ?? vscode.Uri.from({ scheme: SCHEME, path: params.path, query: `original=${id}` });
    this.done = new Promise((resolve) => (this.resolve = resolve));
  }

  get title(): string {
    const pending = this.params.hunks.length - this.decided.size;
    return `${path.basename(this.params.path)}: Elelem's change (${this.params.hunks.length} hunk${this.params.hunks.length === 1 ? "" : "s"}${this.decided.size ? `, ${pending} to decide` : ""})`;
  }

  finish(decision: Decision | undefined): void {
    if (this.finished) return;
    this.finished = true;
    this.resolve(decision);
  }

  /** A per-hunk decision; the review ends when every hunk has one. */
  decide(hunk: number, accept: boolean): void {
    if (!this.params.hunks.some((h) => h.id === hunk)) return;
    this.decided.set(hunk, accept);
    if (this.decided.size === this.params.hunks.length) this.finish({ accepted: this.acceptedSoFar() });
  }

  acceptedSoFar(): number[] {
    return this.params.hunks.filter((h) => this.decided.get(h.id) === true).map((h) => h.id);
  }
}

export interface ReviewEvents {
  started(review: Review): void;
  ended(review: Review, decision: Decision | undefined): void;
}

export class Reviews implements vscode.Disposable {
  private next = 1;
  private readonly open = new Map<number, Review>();
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  private readonly lensesChanged = new vscode.EventEmitter<void>();
  private readonly disposables: vscode.Disposable[] = [];

  constructor(private readonly events: ReviewEvents) {
    const reviews = this;
    this.disposables.push(
      vscode.workspace.registerTextDocumentContentProvider(SCHEME, {
        onDidChange: this.changed.event,
        provideTextDocumentContent(uri) {
          const review = reviews.forUri(uri);
          if (!review) return "";
          return uri.query.startsWith("proposal=") ? review.params.newText : review.params.oldText ?? "";
        },
      }),
      vscode.languages.registerCodeLensProvider({ scheme: SCHEME }, {
        onDidChangeCodeLenses: this.lensesChanged.event,
        provideCodeLenses(document) {
          const review = reviews.forUri(document.uri);
          if (!review || !document.uri.query.startsWith("proposal=")) return [];
          return lenses(review);
        },
      }),
      vscode.commands.registerCommand("elelem.review.acceptAll", (id?: number) => this.act(id, "acceptAll")),
      vscode.commands.registerCommand("elelem.review.rejectAll", (id?: number) => this.act(id, "rejectAll")),
      vscode.commands.registerCommand("elelem.review.acceptAllForTurn", (id?: number) => this.act(id, "acceptAllForTurn")),
      vscode.commands.registerCommand("elelem.review.chooseHunks", (id?: number) => this.choose(id)),
      vscode.commands.registerCommand("elelem.review.acceptHunk", (id: number, hunk: number) => this.act(id, "acceptHunk", [hunk])),
      vscode.commands.registerCommand("elelem.review.rejectHunk", (id: number, hunk: number) => this.act(id, "rejectHunk", [hunk])),
    );
  }

  /** Show the change and wait for the user's decision; undefined when `token` withdrew it. */
  async review(params: ProposeParams, document: vscode.TextDocument | undefined, token: vscode.CancellationToken): Promise<Decision | undefined> {
    const review = new Review(this.next++, params, document);
    this.open.set(review.id, review);
    const cancelled = token.onCancellationRequested(() => review.finish(undefined));
    try {
      this.events.started(review);
      void this.show(review, true); // beside, without the keyboard: the user may be typing
      const decision = await review.done;
      this.events.ended(review, decision);
      return decision;
    } finally {
      cancelled.dispose();
      this.open.delete(review.id);
      await this.close(review);
    }
  }

  /** Act on a review (the latest one when `id` is not given); from a command or the chat card. */
  act(id: number | undefined, action: Action, hunks: number[] = []): void {
    const review = this.find(id);
    if (!review) {
      void vscode.window.showInformationMessage("Elelem: no change is waiting for review.");
      return;
    }
    const all = review.params.hunks.map((h) => h.id);
    switch (action) {
      case "acceptAll":
        return review.finish({ accepted: all });
      case "rejectAll":
        return review.finish({ accepted: [] });
      case "rejectWithReason":
        void this.rejectWithReason(review);
        return;
      case "acceptAllForTurn":
        return review.finish({ accepted: all, acceptAllForTurn: true });
      case "apply":
        return review.finish({ accepted: all.filter((h) => hunks.includes(h)) });
      case "acceptHunk":
      case "rejectHunk":
        for (const hunk of hunks) review.decide(hunk, action === "acceptHunk");
        this.lensesChanged.fire();
        return;
      case "open":
        void this.show(review);
        return;
    }
  }

  /** Reject, telling the model why (the answer's `reason`, cut to 2,000 characters by the daemon). */
  private async rejectWithReason(review: Review): Promise<void> {
    const reason = await vscode.window.showInputBox({
      title: `Elelem: reject the change to ${path.basename(review.params.path)}`,
      prompt: "Why? The model reads it (Escape keeps the review open)",
      ignoreFocusOut: true,
    });
    if (reason === undefined || review.finished) return;
    review.finish({ accepted: [], ...(reason.trim() ? { reason: reason.trim() } : {}) });
  }

  /** "Choose Hunks…": a quick pick of the hunks, all ticked; the ticked ones are accepted. */
  async choose(id?: number): Promise<void> {
    const review = this.find(id);
    if (!review) return this.act(id, "open");
    const items = review.params.hunks.map((hunk) => ({
      label: `Hunk ${hunk.id}`,
      description: `lines ${hunk.newStart}–${hunk.newStart + Math.max(hunk.newLines, 1) - 1}`,
      detail: changedLines(hunk.diff),
      picked: review.decided.get(hunk.id) !== false,
      hunk: hunk.id,
    }));
    const picked = await vscode.window.showQuickPick(items, {
      title: `Elelem: accept which hunks of ${path.basename(review.params.path)}?`,
      placeHolder: "Ticked hunks are accepted, the others rejected",
      canPickMany: true,
      ignoreFocusOut: true,
    });
    if (picked === undefined || review.finished) return;
    review.finish({ accepted: picked.map((item) => item.hunk) });
  }

  dispose(): void {
    for (const review of this.open.values()) review.finish(undefined);
    for (const d of this.disposables) d.dispose();
  }

  private find(id: number | undefined): Review | undefined {
    if (id !== undefined && typeof id === "number") return this.open.get(id);
    return [...this.open.values()].at(-1);
  }

  private forUri(uri: vscode.Uri): Review | undefined {
    const id = Number(/=(\d+)$/.exec(uri.query)?.[1]);
    return this.open.get(id);
  }

  private async show(review: Review, preserveFocus = false): Promise<void> {
    try {
      await vscode.commands.executeCommand("vscode.diff", review.original, review.proposal, review.title, { preview: false, preserveFocus });
    } catch (error) {
      void vscode.window.showWarningMessage(`Elelem: could not open the diff: ${(error as Error).message}`);
    }
  }

  /** Close the review's diff tab (it names the proposal). */
  private async close(review: Review): Promise<void> {
    const groups = vscode.window.tabGroups;
    if (!groups) return;
    const tabs = groups.all.flatMap((g) => g.tabs).filter((tab) => {
      const input = tab.input as { modified?: vscode.Uri } | undefined;
      return input?.modified?.toString() === review.proposal.toString();
    });
    if (tabs.length) await groups.close(tabs).then(undefined, () => undefined);
  }
}

function lenses(review: Review): vscode.CodeLens[] {
  const top = new vscode.Range(0, 0, 0, 0);
  const out = [
    new vscode.CodeLens(top, { title: "$(check-all) Accept all", command: "elelem.review.acceptAll", arguments: [review.id] }),
    new vscode.CodeLens(top, { title: "$(close-all) Reject all", command: "elelem.review.rejectAll", arguments: [review.id] }),
    new vscode.CodeLens(top, { title: "Accept all for this turn", command: "elelem.review.acceptAllForTurn", arguments: [review.id] }),
  ];
  for (const hunk of review.params.hunks) {
    const line = Math.max(hunk.newStart - 1 + leadingContext(hunk.diff), 0);
    const range = new vscode.Range(line, 0, line, 0);
    const decided = review.decided.get(hunk.id);
    if (decided !== undefined) {
      out.push(new vscode.CodeLens(range, { title: `Hunk ${hunk.id}: ${decided ? "accepted" : "rejected"}`, command: "" }));
      continue;
    }
    out.push(
      new vscode.CodeLens(range, { title: `$(check) Accept hunk ${hunk.id}`, command: "elelem.review.acceptHunk", arguments: [review.id, hunk.id] }),
      new vscode.CodeLens(range, { title: `$(close) Reject hunk ${hunk.id}`, command: "elelem.review.rejectHunk", arguments: [review.id, hunk.id] }),
    );
  }
  return out;
}

/** How many context lines a hunk's diff has before its first change (its lenses go on that line). */
function leadingContext(diff: string): number {
  const lines = diff.split("\n").slice(1);
  const first = lines.findIndex((line) => line.startsWith("+") || line.startsWith("-"));
  return first < 0 ? 0 : first;
}

/** The first changed lines of a hunk, for the picker. */
function changedLines(diff: string): string {
  return diff
    .split("\n")
    .filter((line) => /^[-+]/.test(line))
    .slice(0, 3)
    .join("  ")
    .slice(0, 200);
}
