import { ResponseError } from "vscode-jsonrpc/node";

// The daemon contract (protocol.md at the repository root): method names and shapes.
// Only this file and daemon.ts know JSON-RPC names.

export const Method = {
  initialize: "initialize",
  shutdown: "shutdown",
  exit: "exit",
  sessionNew: "session/new",
  sessionTurn: "session/turn",
  sessionCommand: "session/command",
  sessionComplete: "session/complete",
  sessionList: "session/list",
  sessionLoad: "session/load",
  sessionHistory: "session/history",
  sessionClose: "session/close",
  sessionContext: "session/context",
  sessionCancel: "session/cancel",
  inputAsk: "input/ask",
  filesRead: "files/read",
  filesPropose: "files/propose",
  fsReadTextFile: "fs/read_text_file",
  fsWriteTextFile: "fs/write_text_file",
  editorState: "editor/state",
  sessionRewind: "session/rewind",
  sessionCheckpoints: "session/checkpoints",
  sessionSetMode: "session/setMode",
  sessionSteer: "session/steer",
  sessionEditContext: "session/editContext",
} as const;

export const Events = ["thinking", "saying", "doing", "result", "say", "mcp", "mode", "plan", "steer", "usage"] as const;
export type EventName = (typeof Events)[number];

export interface Named {
  name: string;
  description?: string;
}

export interface SessionInfo {
  sessionId: string;
  cwd: string;
  provider: string;
  model: string;
  /** The model the provider's server says answers, once known (protocol.md): shown over `model`. */
  servedModel?: string;
  tools: Named[];
  commands: Named[];
  /** The MCP servers' status (protocol.md, "MCP servers"). */
  mcp?: McpStatus;
  /** Issue 20: the active mode and the ones to pick from (CONTRACT20). */
  mode?: ModeInfo;
  /** Issue 29: the folder's trust, and what trusting it would load (the daemon's list). */
  trust?: TrustInfo;
}

/** `trust` of a session result (protocol.md, `session/new`). */
export interface TrustInfo {
  folder: string;
  trusted: boolean;
  skipped: string[];
  /** One line per plugin file, rule, mode, skill, MCP server (command masked); bounded. */
  loads: string[];
}

export interface McpServer {
  name: string;
  source?: string;
  transport?: string;
  state: string;
  error?: string | null;
  tools?: string[];
  prompts?: string[];
  authorizeUrl?: string | null;
}

export interface McpStatus {
  servers: McpServer[];
  problems: string[];
}

export interface ModeInfo {
  current: string;
  available: { id: string; name: string; description?: string }[];
}

export interface Message {
  role: string;
  content: unknown;
}

/** One entry of `session/load`'s `history`: a kept message, or a tool call drawn again. */
export type HistoryEntry =
  | ({ type: "message" } & Message)
  | { type: "tool"; id: string; name: string; arguments: unknown; ok: boolean; result: unknown }
  | { type: "compacted" };

export interface LoadedSession extends SessionInfo {
  messages: Message[];
  /** The messages with the tool calls between them (a daemon without it: `messages`). */
  history?: HistoryEntry[];
  /** The page before `history` (`session/history`); null or absent: `history` is whole. */
  historyCursor?: string | null;
  /** Issue 20: the last stored plan, for redraw. */
  plan?: { entries: { content: string; status: string }[] } | null;
}

export interface TurnResult {
  reply: string;
  stopReason: "end_turn" | "cancelled" | "error" | "max_turn_requests" | string;
  turnId?: number;
  usage?: Record<string, number>;
}

export interface ListedSession {
  sessionId: string;
  cwd: string;
  provider?: string;
  model?: string;
  servedModel?: string;
  busy?: boolean;
  turns?: number;
  stored?: boolean;
  open?: boolean;
  title?: string;
  updatedAt?: string;
}

export interface AskParams {
  sessionId: string;
  prompt: string;
  options?: string[];
  kind?: "question" | "permission" | string;
  tool?: { name: string; arguments: unknown; diff?: string; plan?: unknown };
  /** `authorize`: the MCP server and the URL to open. */
  server?: string;
  url?: string;
  turnId?: number | null;
}

/** A notification `event/NAME`: its params always carry sessionId and turnId. */
export interface EventParams {
  sessionId: string;
  turnId: number;
  [key: string]: unknown;
}

/** JSON-RPC error codes and the `data.kind` the daemon puts on them. */
export const ErrorKind = {
  methodNotFound: "method_not_found",
  unknownSession: "unknown_session",
  unknownProvider: "unknown_provider",
  sessionBusy: "session_busy",
  sessionLocked: "session_locked",
  invalidAttachment: "invalid_attachment",
  notRunning: "not_running",
  invalidEdit: "invalid_edit",
} as const;

export const METHOD_NOT_FOUND = -32601;

/** Whether a JSON-RPC error carries this `data.kind`. */
export function isKind(error: unknown, kind: string): boolean {
  return error instanceof ResponseError && (error.data as { kind?: string } | undefined)?.kind === kind;
}

/** One line for an error, with the daemon's `data.kind` when it gave one. */
export function errorText(error: unknown): string {
  if (error instanceof ResponseError) {
    const kind = (error.data as { kind?: string } | undefined)?.kind;
    return kind ? `${error.message} (${kind})` : error.message;
  }
  return error instanceof Error ? error.message : String(error);
}
