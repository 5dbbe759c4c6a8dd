// `input/ask`: the daemon asks the user; VS Code answers with an input box or a quick pick.
import * as vscode from "vscode";
import type { CancellationToken } from "vscode-jsonrpc/node";
import type { AskParams } from "./protocol";
import { describe, RewindResult } from "./rewind";

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
  if (params.kind === "confirm") return confirm(params, vsToken);
  if (params.kind === "authorize") return authorize(params, vsToken);
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

/** The answers of a permission question, as the chat's buttons show them (label without icon, description). */
export function permissionChoices(params: AskParams): { answer: string; label: string; description: string }[] {
  const options = params.options?.length ? params.options : ["allow", "deny", "always", "never"];
  return options.slice(0, 10).map((answer) => {
    const known = PERMISSION_CHOICES[answer];
    return {
      answer: String(answer).slice(0, 100),
      label: (known?.label ?? String(answer).charAt(0).toUpperCase() + String(answer).slice(1, 100)).replace(/^\$\([a-z-]+\) /, ""),
      description: known ? known.description(params.tool?.name ?? "tool") : `answer "${String(answer).slice(0, 100)}"`,
    };
  });
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

/** `confirm` (`/undo`, `/rewind`): yes or no, with the dry run's plan as the details. */
async function confirm(params: AskParams, token: vscode.CancellationToken): Promise<string | undefined> {
  const plan = (params.tool as { plan?: RewindResult } | undefined)?.plan;
  // The daemon's question says the plan under its first line, turns numbered as the user
  // counts them; without it, the plan in this client's words.
  const said = (params.prompt ?? "").split("\n").slice(1).map((l) => l.trim()).filter(Boolean);
  const detail = said.length ? said.join(" · ") : plan ? describe(plan, []).replace(/\n/g, " · ") : undefined;
  const options = params.options?.length ? params.options : ["yes", "no"];
  const items = options.map((answer) => ({
    label: answer === "yes" ? "$(check) Yes" : answer === "no" ? "$(close) No" : answer,
    description: answer === "yes" ? "go on" : answer === "no" ? "change nothing" : "",
    detail: answer === "yes" ? detail : undefined,
    answer,
  }));
  const placeHolder = (params.prompt ?? "").split("\n")[0];
  const picked = await vscode.window.showQuickPick(items, { title: "Elelem asks", placeHolder, ignoreFocusOut: true }, token);
  return picked?.answer;
}

/**
 * `authorize` (an MCP server's OAuth step): offer to open the URL in the browser. The
 * answer changes nothing (the server is ready when the redirect arrives); the daemon
 * withdraws the question once it is no longer needed, which closes the offer.
 */
async function authorize(params: AskParams, token: vscode.CancellationToken): Promise<string | undefined> {
  const url = typeof params.url === "string" ? params.url : "";
  const picked = await vscode.window.showQuickPick(
    [{ label: "$(link-external) Open in the browser", description: url, answer: "open" }],
    { title: `Elelem: the MCP server ${params.server ?? ""} needs your approval`, placeHolder: params.prompt, ignoreFocusOut: true },
    token,
  );
  if (picked && /^https?:\/\//i.test(url) && !token.isCancellationRequested) {
    await vscode.env.openExternal(vscode.Uri.parse(url));
  }
  return picked?.answer;
}

/** A VS Code token that follows the JSON-RPC request's token (the daemon cancels a stopped turn's question). */
export function bridge(token: CancellationToken): vscode.CancellationToken {
  const source = new vscode.CancellationTokenSource();
  if (token.isCancellationRequested) source.cancel();
  token.onCancellationRequested(() => source.cancel());
  return source.token;
}
