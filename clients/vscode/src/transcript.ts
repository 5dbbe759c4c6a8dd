// Transcript: what the webview shows, kept so a new webview can be redrawn.
import type { ViewMessage } from "./chat";

const TRANSIENT = new Set(["busy", "completions", "unsent"]);

export class Transcript {
  private messages: ViewMessage[] = [];

  /** Keep a message; consecutive deltas of one turn are kept as one. */
  add(message: ViewMessage): void {
    if (TRANSIENT.has(message.type)) return;
    const last = this.messages.at(-1);
    const delta = message.type === "saying" || message.type === "thinking";
    if (delta && last && last.type === message.type && last.turnId === message.turnId) {
      this.messages[this.messages.length - 1] = { ...last, text: `${last.text}${message.text}` };
    } else {
      this.messages.push(message);
    }
  }

  /**
   * Forget turn `turnId` and every later one: cut at its user message (whose `turnId` the
   * turn's end gave it). False when the transcript does not have it (a redrawn history).
   */
  cutAtTurn(turnId: number): boolean {
    const at = this.messages.findIndex((m) => m.type === "user" && typeof m.turnId === "number" && m.turnId >= turnId);
    if (at < 0) return false;
    this.messages = this.messages.slice(0, at);
    return true;
  }

  clear(): void {
    this.messages = [];
  }

  get last(): ViewMessage | undefined {
    return this.messages.at(-1);
  }

  all(): readonly ViewMessage[] {
    return this.messages;
  }
}
