// The palette commands. Each one is a line or two over Chat.
import * as vscode from "vscode";
import type { Chat } from "./chat";
import { errorText } from "./protocol";
import { VIEW_ID } from "./chatView";
import { pickSession, resumeLastSession } from "./sessions";

/** "Restore Checkpoint…": the session's turns (number, time, prompt, files), newest first. */
async function pickCheckpoint(chat: Chat): Promise<void> {
  const turns = await chat.checkpoints();
  if (turns.length === 0) {
    void vscode.window.showInformationMessage("Elelem: no turn to go back to in this session.");
    return;
  }
  const items = [...turns].reverse().map((t) => ({
    label: `Turn ${t.number ?? t.turnId}: ${t.prompt}`,
    description: new Date(t.at).toLocaleString(),
    detail: t.checkpoint === null ? "changed no file" : t.checkpoint === "lost" ? "its files cannot be restored" : `${t.filesTotal} file${t.filesTotal === 1 ? "" : "s"}: ${t.files.slice(0, 5).join(", ")}`,
    turnId: t.turnId,
  }));
  const picked = await vscode.window.showQuickPick(items, { title: "Elelem: restore the checkpoint before which turn?", placeHolder: "Files and conversation go back to before that turn; later turns are undone too" });
  if (picked) await chat.rewind(picked.turnId);
}

export function registerCommands(context: vscode.ExtensionContext, chat: Chat): void {
  const commands: Record<string, (...args: unknown[]) => unknown> = {
    "elelem.openChat": () => openChat(),
    "elelem.askAboutSelection": () => askAboutSelection(chat),
    "elelem.showContext": () => showContext(chat),
    "elelem.newSession": () => chat.newSession(),
    "elelem.stop": () => chat.stop(),
    "elelem.restartDaemon": () => chat.restart(),
    "elelem.resumeLastSession": () => reporting(resumeLastSession(chat)).then(openChat),
    "elelem.openSession": () => reporting(pickSession(chat)).then(openChat),
    "elelem.undoLastTurn": () => reporting(chat.rewind()),
    "elelem.restoreCheckpoint": () => reporting(pickCheckpoint(chat)),
    "elelem.applyContextEdit": () => reporting(chat.applyContextEdit()),
    "elelem.pickModel": () => reporting(chat.pickModel()),
  };
  for (const [id, run] of Object.entries(commands)) {
    context.subscriptions.push(vscode.commands.registerCommand(id, run));
  }
  context.subscriptions.push(
    vscode.workspace.onDidGrantWorkspaceTrust(() => {
      void vscode.window.showInformationMessage(
        "Elelem: the workspace is trusted now. Start a New Session to load the project's plugins.",
      );
    }),
    vscode.workspace.onDidChangeConfiguration(async (event) => {
      if (!event.affectsConfiguration("elelem.command") && !event.affectsConfiguration("elelem.env")) return;
      const restart = "Restart Daemon";
      const choice = await vscode.window.showInformationMessage(
        "Elelem: the daemon's command line or environment changed. Restart the daemon to use it (the session resumes from its stored copy).",
        restart,
      );
      if (choice === restart) await chat.restart();
    }),
  );
}

function openChat(): Thenable<unknown> {
  return vscode.commands.executeCommand(`${VIEW_ID}.focus`);
}

async function reporting(work: Promise<unknown>): Promise<void> {
  try {
    await work;
  } catch (error) {
    void vscode.window.showErrorMessage(`Elelem: ${errorText(error)}`);
  }
}

/** Ask a question about the selected code: the prompt carries the file, the line range and the code. */
async function askAboutSelection(chat: Chat): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  if (!editor || editor.selection.isEmpty) {
    void vscode.window.showWarningMessage("Elelem: select some code first.");
    return;
  }
  const question = await vscode.window.showInputBox({
    title: "Ask elelem about the selection",
    prompt: "Your question (leave empty to ask for an explanation)",
    ignoreFocusOut: true,
  });
  if (question === undefined) return;
  const { document, selection } = editor;
  const first = selection.start.line + 1;
  const last = selection.end.character === 0 && selection.end.line > selection.start.line
    ? selection.end.line
    : selection.end.line + 1;
  const where = `${vscode.workspace.asRelativePath(document.uri)}:${first}-${last}`;
  const code = document.getText(selection).replace(/\r?\n$/, "");
  const fence = code.includes("```") ? "````" : "```";
  const text = `${question.trim() || "Explain this code."}\n\n${where}\n${fence}${document.languageId}\n${code}\n${fence}`;
  await openChat();
  await chat.send(text);
}

/** Open the context the model sees next turn as a Markdown document. */
async function showContext(chat: Chat): Promise<void> {
  try {
    const messages = await chat.context();
    const body = messages
      .map(({ role, content }) => {
        const text = typeof content === "string" ? content : "```json\n" + JSON.stringify(content, null, 2) + "\n```";
        return `## ${role}\n\n${text}\n`;
      })
      .join("\n");
    const document = await vscode.workspace.openTextDocument({ language: "markdown", content: body });
    await vscode.window.showTextDocument(document, { preview: true });
  } catch (error) {
    void vscode.window.showErrorMessage(`Elelem: ${errorText(error)}`);
  }
}
