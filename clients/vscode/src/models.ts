// The model picker (issue 40): the daemon says what there is, as `/model` and `/provider`
// do — the models the provider's server lists (`session/complete` of `/model `) and the
// providers (`/provider `). The choice runs `/model NAME` or `/provider NAME` in the chat,
// where its answer shows, and the header follows (clients/nvim/lua/elelem/models.lua).
import * as vscode from "vscode";
import type { Daemon } from "./daemon";
import { Method, SessionInfo } from "./protocol";

/** Entries offered at most, of each kind (a server may list thousands). */
export const MAX = 200;
/** A name the chat can send as one word: no spaces, no control characters, bounded. */
const NAME = /^[^\s\p{Cc}]{1,200}$/u;

export interface Entry {
  kind: "model" | "provider";
  name: string;
}

async function complete(daemon: Daemon, sessionId: string, text: string): Promise<string[]> {
  const result = await daemon.request<{ items?: unknown }>(Method.sessionComplete, { sessionId, text });
  const items = Array.isArray(result?.items) ? result.items.slice(0, MAX) : [];
  return items.filter((item): item is string => typeof item === "string" && NAME.test(item));
}

/** The picker's entries: the provider's models first, then the providers. */
export async function entries(daemon: Daemon, sessionId: string): Promise<Entry[]> {
  const [models, providers] = await Promise.all([complete(daemon, sessionId, "/model "), complete(daemon, sessionId, "/provider ")]);
  return [
    ...[...new Set(models)].map((name) => ({ kind: "model" as const, name })),
    ...[...new Set(providers)].map((name) => ({ kind: "provider" as const, name })),
  ];
}

/** Ask which; the answer is the command line to run (`/model NAME`), or undefined. */
export async function pick(daemon: Daemon, session: SessionInfo): Promise<string | undefined> {
  const all = await entries(daemon, session.sessionId);
  if (all.length === 0) {
    void vscode.window.showInformationMessage("Elelem: the daemon lists no models or providers.");
    return undefined;
  }
  type Item = vscode.QuickPickItem & { entry?: Entry };
  const items: Item[] = [];
  for (const kind of ["model", "provider"] as const) {
    const ofKind = all.filter((e) => e.kind === kind);
    if (ofKind.length === 0) continue;
    items.push({ label: kind === "model" ? `Models of ${session.provider}` : "Providers", kind: vscode.QuickPickItemKind.Separator });
    for (const entry of ofKind) {
      const now = kind === "model" ? entry.name === session.model : entry.name === session.provider;
      items.push({ label: entry.name, description: now ? `(current) /${kind} ${entry.name}` : `/${kind} ${entry.name}`, entry });
    }
  }
  const picked = await vscode.window.showQuickPick(items, {
    title: `Elelem: pick a model (now ${session.provider} · ${session.model})`,
    placeHolder: "A model of this provider, or another provider (its default model)",
    matchOnDescription: true,
  });
  return picked?.entry ? `/${picked.entry.kind} ${picked.entry.name}` : undefined;
}
