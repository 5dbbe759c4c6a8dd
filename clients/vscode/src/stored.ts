// Reopening stored sessions (protocol.md, Stored sessions): the id the chat remembers for a
// reloaded window, and `session/load` that waits a moment for a lock another daemon still holds.
import * as vscode from "vscode";
import type { Daemon } from "./daemon";
import { mcpServers } from "./config";
import { ErrorKind, isKind, LoadedSession, Method } from "./protocol";

/** A reloaded window may start before the old daemon let go of the session's lock. */
const LOCK_WAIT_MS = 5000;
const LOCK_POLL_MS = 250;
const KEY = "elelem.sessionId";

/** The session the chat shows, kept in the workspace state so a reloaded window reopens it. */
export class Remembered {
  constructor(private readonly memory: vscode.Memento | undefined) {}

  get sessionId(): string | undefined {
    return this.memory?.get<string>(KEY);
  }

  set(sessionId: string | undefined): void {
    if (this.sessionId !== sessionId) void this.memory?.update(KEY, sessionId);
  }
}

/** `session/load`; with `waitForLock`, a session still locked is tried again for a while. */
export async function openStored(daemon: Daemon, sessionId: string, waitForLock: boolean): Promise<LoadedSession> {
  const deadline = Date.now() + (waitForLock ? LOCK_WAIT_MS : 0);
  for (;;) {
    try {
      return await daemon.request<LoadedSession>(Method.sessionLoad, {
        sessionId,
        trusted: vscode.workspace.isTrusted,
        ...mcpServers(),
      });
    } catch (error) {
      if (!isKind(error, ErrorKind.sessionLocked) || Date.now() >= deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, LOCK_POLL_MS));
    }
  }
}
