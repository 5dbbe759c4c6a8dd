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
