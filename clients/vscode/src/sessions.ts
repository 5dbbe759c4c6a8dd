// Stored sessions (protocol.md, issue 8): resume the last one, or pick one.
import * as vscode from "vscode";
import type { Chat } from "./chat";
import type { ListedSession } from "./protocol";

export async function resumeLastSession(chat: Chat): Promise<void> {
  const all = await stored(chat);
  const last = all.find((session) => session.sessionId !== chat.sessionId);
  if (!last) {
    void vscode.window.showInformationMessage(nothingElse(all, chat));
    return;
  }
  await chat.load(last.sessionId);
}

/**
 * "Open Session…": the folder's stored sessions, most recent first; the one open here is
 * listed too, marked, and picking it changes nothing.
 */
export async function pickSession(chat: Chat): Promise<void> {
  const sessions = await stored(chat);
  if (sessions.length === 0 || (sessions.length === 1 && sessions[0].sessionId === chat.sessionId)) {
    void vscode.window.showInformationMessage(nothingElse(sessions, chat));
    return;
  }
  const picked = await vscode.window.showQuickPick(
    sessions.map((session) => {
      const here = session.sessionId === chat.sessionId;
      return {
        label: session.title || "(untitled)",
        description: `${here ? "open here · " : ""}${session.updatedAt ? new Date(session.updatedAt).toLocaleString() : ""}`,
        detail: `${session.open && !here ? "open · " : ""}${session.sessionId} · ${session.cwd}`,
        session,
      };
    }),
    { title: "Elelem: open a session", placeHolder: "Most recent first", matchOnDetail: true },
  );
  if (picked && picked.session.sessionId !== chat.sessionId) await chat.load(picked.session.sessionId);
}

/** Why there is nothing to open: no stored session, or only the one open here. */
function nothingElse(sessions: ListedSession[], chat: Chat): string {
  return sessions.some((s) => s.sessionId === chat.sessionId)
    ? "Elelem: the only stored session for this folder is the one open here."
    : "Elelem: no stored session for this folder yet.";
}

/** Stored sessions, most recent first (the daemon sorts them; sorted again to be sure). */
async function stored(chat: Chat): Promise<ListedSession[]> {
  return (await chat.sessions())
    .filter((session) => session.stored)
    .sort((a, b) => (b.updatedAt ?? "").localeCompare(a.updatedAt ?? ""));
}
