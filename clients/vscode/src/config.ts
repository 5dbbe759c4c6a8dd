// The extension's settings, read fresh each time they are needed.
import * as vscode from "vscode";

export interface Settings {
  command: string[];
  provider?: string;
  model?: string;
  env: Record<string, string>;
}

export class SettingsError extends Error {}

export function readSettings(): Settings {
  const config = vscode.workspace.getConfiguration("elelem");
  const line = config.get<string>("command", "elelem daemon");
  const env = config.get<Record<string, unknown>>("env", {}) ?? {};
  const bad = Object.entries(env).filter(([, value]) => typeof value !== "string");
  if (bad.length > 0) {
    throw new SettingsError(
      `elelem.env: values must be strings (${bad.map(([key]) => key).join(", ")} is not)`,
    );
  }
  return {
    command: splitCommand(line),
    provider: config.get<string>("provider") || undefined,
    model: config.get<string>("model") || undefined,
    env: env as Record<string, string>,
  };
}

/** Split a command line as a POSIX shell would, without expansions: quotes and backslashes only. */
export function splitCommand(line: string): string[] {
  const words: string[] = [];
  let word = "";
  let inWord = false;
  let quote: '"' | "'" | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote) {
      if (c === quote) quote = undefined;
      else if (c === "\\" && quote === '"' && i + 1 < line.length && '"\\$`'.includes(line[i + 1]))
        word += line[++i];
      else word += c;
    } else if (c === "'" || c === '"') {
      quote = c;
      inWord = true;
    } else if (c === "\\" && i + 1 < line.length) {
      word += line[++i];
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) words.push(word);
      word = "";
      inWord = false;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (quote) throw new SettingsError(`elelem.command: unterminated ${quote} quote in: ${line}`);
  if (inWord) words.push(word);
  if (words.length === 0) throw new SettingsError("elelem.command is empty: set it to the daemon's command line, such as `elelem daemon`");
  return words;
}

/** `elelem.prestart`: start the daemon and a session when the extension activates. */
export function prestartEnabled(): boolean {
  return vscode.workspace.getConfiguration("elelem").get<boolean>("prestart", true) !== false;
}

/**
 * `elelem.mcpServers`: the client's MCP servers for new and loaded sessions, in either of
 * protocol.md's shapes (ACP's list or the files' map), as `{mcpServers}`; `{}` when none.
 * A bad entry is the daemon's to name (the status's `problems`); a setting that is neither
 * a list nor an object is left out, with a warning in the log.
 */
export function mcpServers(): { mcpServers?: unknown } {
  const value = vscode.workspace.getConfiguration("elelem").get<unknown>("mcpServers");
  if (Array.isArray(value)) return value.length ? { mcpServers: value } : {};
  if (value && typeof value === "object") return Object.keys(value).length ? { mcpServers: value } : {};
  return {};
}
