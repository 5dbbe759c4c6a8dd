// The "Elelem" output channel: the extension's log and the daemon's stderr.
import * as vscode from "vscode";

export type Log = vscode.LogOutputChannel;

export function createLog(context: vscode.ExtensionContext): Log {
  const log = vscode.window.createOutputChannel("Elelem", { log: true });
  context.subscriptions.push(log);
  return log;
}
