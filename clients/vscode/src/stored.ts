// Reopening stored sessions (protocol.md, Stored sessions): the id the chat remembers for a
// reloaded window, and `session/load` that waits a moment for a lock another daemon still holds.
import * as vscode from "vscode";
import type { Daemon } from "./daemon";
import { mcpServers } from "./config";
import { ErrorKind, HistoryEntry, isKind, LoadedSession, Method } from "./protocol";

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

/** The pages of history a session/load result leaves out fetched at most (a bound on a hostile daemon). */
const MAX_PAGES = 10000;

/**
 * `session/load`; with `waitForLock`, a session still locked is tried again for a while. The
 * answer carries the newest page of the history: the older pages are asked for
 * (`session/history`) and put before it, so `history` is the whole transcript.
 */
export async function openStored(daemon: Daemon, sessionId: string, waitForLock: boolean): Promise<LoadedSession> {
  const deadline = Date.now() + (waitForLock ? LOCK_WAIT_MS : 0);
  for (;;) {
    try {
      const loaded = await daemon.request<LoadedSession>(Method.sessionLoad, {
        sessionId,
        trusted: vscode.workspace.isTrusted,
        ...mcpServers(),
      });
      return await withOlderPages(daemon, loaded);
    } catch (error) {
      if (!isKind(error, ErrorKind.sessionLocked) || Date.now() >= deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, LOCK_POLL_MS));
    }
  }
}

/** The loaded session with every page of its history before the first one (`session/history`). */
export async function withOlderPages(daemon: Daemon, loaded: LoadedSession): Promise<LoadedSession> {
  let cursor = loaded.historyCursor;
  if (!cursor || !loaded.history) return loaded;
  const pages: HistoryEntry[][] = [];
  for (let n = 0; cursor && n < MAX_PAGES; n++) {
    const page: { history: HistoryEntry[]; cursor: string | null } = await daemon.request(Method.sessionHistory, {
      sessionId: loaded.sessionId,
      cursor,
    });
    pages.push(page.history);
    cursor = page.cursor;
  }
  pages.reverse();
  return { ...loaded, history: [...pages.flat(), ...loaded.history], historyCursor: null };
}
