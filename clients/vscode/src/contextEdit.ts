// `/context edit N` (protocol.md, "Context editing"): the messages the user opened for
// editing, each an untitled document remembered with its session and its index in
// `session/context`. Only the bookkeeping lives here; chat.ts sends `session/editContext`.
import * as vscode from "vscode";

export interface ContextEdit {
  sessionId: string;
  /** The place in `session/context`'s messages (0 is the system prompt, never opened). */
  index: number;
  document: vscode.TextDocument;
}

/** At most this many messages open for editing at once: the oldest is forgotten first. */
const MAX_OPEN = 32;

export class ContextEdits {
  private readonly open_ = new Map<string, ContextEdit>();

  async open(sessionId: string, index: number, role: string, text: string): Promise<ContextEdit> {
    const document = await vscode.workspace.openTextDocument({ language: role === "user" || role === "assistant" ? "markdown" : "plaintext", content: text });
    const edit = { sessionId, index, document };
    this.open_.set(key(document), edit);
    while (this.open_.size > MAX_OPEN) this.open_.delete(this.open_.keys().next().value as string);
    await vscode.window.showTextDocument(document, { preview: false });
    return edit;
  }

  find(document: vscode.TextDocument | undefined): ContextEdit | undefined {
    if (document) return this.open_.get(key(document));
    // No editor in focus: the one open message, if there is exactly one.
    return this.open_.size === 1 ? [...this.open_.values()][0] : undefined;
  }

  forget(document: vscode.TextDocument): void {
    this.open_.delete(key(document));
  }
}

function key(document: vscode.TextDocument): string {
  return document.uri.toString();
}

/** A message's text: a string, or the text parts of a list (images stay in the daemon). */
export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .map((part) => (part && typeof part === "object" && typeof (part as { text?: unknown }).text === "string" ? (part as { text: string }).text : ""))
      .filter(Boolean)
      .join("\n");
  }
  return content === null || content === undefined ? "" : JSON.stringify(content);
}
