// Entry point: wire the log, the chat, its view and the commands. No agent logic here.
import * as vscode from "vscode";
import { Chat } from "./chat";
import { registerChatView } from "./chatView";
import { registerCommands } from "./commands";
import { prestartEnabled } from "./config";
import { createLog } from "./log";

let chat: Chat | undefined;

/** Returns the Chat as the extension's API (tests use it to reach the daemon). */
export function activate(context: vscode.ExtensionContext): Chat {
  const log = createLog(context);
  const version = String(context.extension?.packageJSON?.version ?? "0.0.0");
  chat = new Chat(log, version, context.workspaceState);
  registerChatView(context, chat);
  registerCommands(context, chat);
  if (prestartEnabled()) chat.prestart();
  return chat;
}

export async function deactivate(): Promise<void> {
  await chat?.dispose();
  chat = undefined;
}
