// Stored sessions (protocol.md, issue 8): resume the last one, or pick one.
import * as vscode from "vscode";
import type { Chat } from "./chat";
import type { ListedSession } from "./protocol";

export async function resumeLastSession(chat: Chat): Promise<void> {
  const last = (await stored(chat))[0];
  if (!last) {
    void vscode.window.showInformationMessage("Elelem: no stored session for this folder yet.");
    return;
  }
  await chat.load(last.sessionId);
}

export async function pickSession(chat: Chat): Promise<void> {
  const sessions = await stored(chat);
  if (sessions.length === 0) {
    void vscode.window.showInformationMessage("Elelem: no stored session for this folder yet.");
    return;
  }
  const picked = await vscode.window.showQuickPick(
    sessions.map((session) => ({
      label: session.title || "(untitled)",
      description: session.updatedAt ? new Date(session.updatedAt).toLocaleString() : undefined,
      detail: `${session.open ? "open · " : ""}${session.sessionId} · ${session.cwd}`,
      session,
    })),
    { title: "Elelem: open a session", placeHolder: "Most recent first", matchOnDetail: true },
  );
  if (picked) await chat.load(picked.session.sessionId);
}

/** Stored sessions, most recent first (the daemon sorts them; sorted again to be sure). */
async function stored(chat: Chat): Promise<ListedSession[]> {
  const current = chat.sessionId;
  return (await chat.sessions())
    .filter((session) => session.stored && session.sessionId !== current)
    .sort((a, b) => (b.updatedAt ?? "").localeCompare(a.updatedAt ?? ""));
}
