// Slash-command completion: command names from the session, arguments from `session/complete`.
import { ResponseError } from "vscode-jsonrpc/node";
import type { Daemon } from "./daemon";
import type { Log } from "./log";
import { errorText, METHOD_NOT_FOUND, Method, SessionInfo } from "./protocol";

export interface Item {
  label: string;
  detail?: string;
}

export class Completion {
  private argumentsSupported = true;

  constructor(private readonly log: Log) {}

  async items(daemon: Daemon | undefined, session: SessionInfo | undefined, text: string): Promise<Item[]> {
    // `/` commands and their arguments; `@` mentions: the files session/complete offers.
    if (!session || !(text.startsWith("/") || /(^|\s)@\S*$/.test(text))) return [];
    const name = /^\/(\S*)$/.exec(text);
    if (name) {
      return session.commands
        .filter((c) => c.name.startsWith(name[1]))
        .map((c) => ({ label: `/${c.name}`, detail: c.description }));
    }
    if (!daemon || !this.argumentsSupported) return [];
    try {
      const result = await daemon.request<{ items: string[] }>(Method.sessionComplete, {
        sessionId: session.sessionId,
        text,
      });
      return result.items.map((label) => ({ label }));
    } catch (error) {
      if (error instanceof ResponseError && error.code === METHOD_NOT_FOUND) this.argumentsSupported = false;
      else this.log.warn(`session/complete: ${errorText(error)}`);
      return [];
    }
  }
}
