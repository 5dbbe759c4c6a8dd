// `input/ask`: the daemon asks the user; VS Code answers with an input box or a quick pick.
import * as vscode from "vscode";
import type { CancellationToken } from "vscode-jsonrpc/node";
import type { AskParams } from "./protocol";

/** How each answer of a permission question (protocol.md, Permissions) is shown. */
const PERMISSION_CHOICES: Record<string, { label: string; description: (tool: string) => string }> = {
  allow: { label: "$(check) Allow", description: () => "run this call" },
  deny: { label: "$(close) Deny", description: () => "do not run this call" },
  always: { label: "$(check-all) Always allow", description: (tool) => `run this and every later ${tool} call in this session without asking` },
  never: { label: "$(circle-slash) Never allow", description: (tool) => `deny this and every later ${tool} call in this session without asking` },
};

/** The user's answer, or undefined when they dismissed the question (or the turn was stopped). */
export async function askUser(params: AskParams, token: CancellationToken): Promise<string | undefined> {
  const vsToken = bridge(token);
  if (params.kind === "permission") return permission(params, vsToken);
  if (params.options && params.options.length > 0) {
    return vscode.window.showQuickPick(
      params.options,
      { title: "Elelem asks", placeHolder: params.prompt, ignoreFocusOut: true },
      vsToken,
    );
  }
  return vscode.window.showInputBox(
    { title: "Elelem asks", prompt: params.prompt, ignoreFocusOut: true },
    vsToken,
  );
}

async function permission(params: AskParams, token: vscode.CancellationToken): Promise<string | undefined> {
  const options = params.options?.length ? params.options : ["allow", "deny", "always", "never"];
  const tool = params.tool;
  const items = options.map((answer) => {
    const known = PERMISSION_CHOICES[answer];
    return {
      label: known?.label ?? answer.charAt(0).toUpperCase() + answer.slice(1),
      description: known ? known.description(tool?.name ?? "tool") : `answer "${answer}"`,
      answer,
      detail: answer === "allow" && tool ? JSON.stringify(tool.arguments) : undefined,
    };
  });
  const picked = await vscode.window.showQuickPick(
    items,
    {
      title: tool ? `Elelem wants to run ${tool.name}` : "Elelem asks",
      placeHolder: params.prompt,
      ignoreFocusOut: true,
    },
    token,
  );
  return picked?.answer;
}

/** A VS Code token that follows the JSON-RPC request's token (the daemon cancels a stopped turn's question). */
function bridge(token: CancellationToken): vscode.CancellationToken {
  const source = new vscode.CancellationTokenSource();
  if (token.isCancellationRequested) source.cancel();
  token.onCancellationRequested(() => source.cancel());
  return source.token;
}
