// Chat: one daemon, the current session, and the transcript the webview shows.
// It forwards input and renders events; the agent, its tools and its commands live in the daemon.
import * as os from "os";
import * as vscode from "vscode";
import { CancellationToken, ResponseError } from "vscode-jsonrpc/node";
import { Completion } from "./completion";
import { readSettings } from "./config";
import { Daemon, ExitInfo } from "./daemon";
import { askUser } from "./input";
import { Transcript } from "./transcript";
import type { Log } from "./log";
import {
  AskParams,
  ErrorKind,
  EventParams,
  ListedSession,
  LoadedSession,
  Message,
  Method,
  SessionInfo,
  TurnResult,
  errorText,
} from "./protocol";

/** A `{type}`-tagged message for the webview (media/main.js renders each type). */
export interface ViewMessage {
  type: string;
  [key: string]: unknown;
}

export interface View {
  post(message: ViewMessage): void;
}

export class Chat implements vscode.Disposable {
  private daemon?: Daemon;
  private starting?: Promise<Daemon>;
  private session?: SessionInfo;
  private view?: View;
  private readonly transcript = new Transcript();
  private busy = false;
  private crashReported = false;
  private idle = Promise.resolve();
  private readonly completion: Completion;

  constructor(
    private readonly log: Log,
    private readonly version: string,
  ) {
    this.completion = new Completion(log);
  }

  get sessionId(): string | undefined {
    return this.session?.sessionId;
  }

  get daemonPid(): number | undefined {
    return this.daemon?.pid;
  }

  /** The webview appeared (or went away): replay the transcript into the new one. */
  attach(view: View | undefined): void {
    this.view = view;
  }

  /** A message from the webview. */
  async handle(message: ViewMessage): Promise<void> {
    switch (message.type) {
      case "ready":
        this.view?.post({ type: "clear" });
        for (const old of this.transcript.all()) this.view?.post(old);
        this.view?.post({ type: "busy", busy: this.busy });
        return;
      case "send":
        return this.send(String(message.text ?? ""));
      case "stop":
        return this.stop();
      case "newSession":
        return this.newSession();
      case "complete":
        return this.complete(String(message.text ?? ""));
      default:
        this.log.warn(`unknown message from the webview: ${JSON.stringify(message)}`);
    }
  }

  /** Send a prompt, or run a slash command when the text starts with `/`. */
  async send(text: string): Promise<void> {
    text = text.trim();
    if (!text) return;
    if (this.busy) {
      this.show({ type: "error", text: "A turn is still running: press Stop or wait for it." });
      return;
    }
    let done = () => {};
    this.idle = new Promise((resolve) => (done = resolve));
    this.setBusy(true);
    this.crashReported = false;
    try {
      const session = await this.ensureSession();
      if (text.startsWith("/")) await this.command(session, text);
      else await this.turn(session, text);
    } catch (error) {
      this.failed(error);
    } finally {
      this.setBusy(false);
      done();
    }
  }

  async stop(): Promise<void> {
    if (this.busy && this.session && this.daemon) {
      await this.daemon.notify(Method.sessionCancel, { sessionId: this.session.sessionId });
    }
  }

  /** Forget the conversation on screen and start a fresh session. */
  async newSession(): Promise<void> {
    await this.stop();
    await this.idle;
    const old = this.session;
    this.session = undefined;
    this.transcript.clear();
    this.view?.post({ type: "clear" });
    if (old && this.daemon?.running) {
      await this.daemon
        .request(Method.sessionClose, { sessionId: old.sessionId })
        .catch((error) => this.log.warn(`session/close: ${errorText(error)}`));
    }
    await this.ensureSession().catch((error) => this.failed(error));
  }

  /** The messages the model sees next turn (`session/context`). */
  async context(): Promise<Message[]> {
    const session = await this.ensureSession();
    const result = await this.daemon!.request<{ messages: Message[] }>(Method.sessionContext, {
      sessionId: session.sessionId,
    });
    return result.messages;
  }

  /** Open and stored sessions (`session/list`), for the picker. */
  async sessions(): Promise<ListedSession[]> {
    const daemon = await this.ensureDaemon();
    const result = await daemon.request<{ sessions: ListedSession[] }>(Method.sessionList, {
      cwd: workspaceCwd(),
    });
    return result.sessions;
  }

  /** Switch to a stored session and redraw its history (`session/load`). */
  async load(sessionId: string): Promise<void> {
    if (this.busy) throw new Error("A turn is still running: press Stop first.");
    const daemon = await this.ensureDaemon();
    const loaded = await daemon.request<LoadedSession>(Method.sessionLoad, {
      sessionId,
      trusted: vscode.workspace.isTrusted,
    });
    const old = this.session;
    if (old && old.sessionId !== loaded.sessionId) {
      await daemon
        .request(Method.sessionClose, { sessionId: old.sessionId })
        .catch((error) => this.log.warn(`session/close: ${errorText(error)}`));
    }
    this.transcript.clear();
    this.view?.post({ type: "clear" });
    this.showSession(loaded);
    this.show({ type: "history", messages: loaded.messages ?? [] });
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.idle;
    await this.shutdown();
    this.session = undefined;
    this.show({ type: "say", kind: "info", text: "The daemon restarts with your next message." });
  }

  async dispose(): Promise<void> {
    await this.shutdown();
  }

  private async shutdown(): Promise<void> {
    const daemon = this.daemon ?? (await this.starting?.catch(() => undefined));
    this.daemon = undefined;
    this.starting = undefined;
    await daemon?.stop();
  }

  private async turn(session: SessionInfo, text: string): Promise<void> {
    this.show({ type: "user", text });
    const result = await this.daemon!.request<TurnResult>(Method.sessionTurn, {
      sessionId: session.sessionId,
      text,
    });
    this.show({ type: "turnEnd", ...result });
  }

  private async command(session: SessionInfo, line: string): Promise<void> {
    this.show({ type: "command", line });
    const result = await this.daemon!.request<{ output: string; exit?: boolean }>(Method.sessionCommand, {
      sessionId: session.sessionId,
      line,
    });
    this.show({ type: "commandOutput", line, output: result.output ?? "" });
    if (result.exit) {
      // `/exit`: ending the session is the client's job.
      this.session = undefined;
      await this.daemon!.request(Method.sessionClose, { sessionId: session.sessionId });
      this.show({ type: "say", kind: "info", text: "Session closed: your next message starts a new one." });
      return;
    }
    await this.refreshSession(session);
  }

  /** A command may switch provider or model: update the header from `session/list`. */
  private async refreshSession(session: SessionInfo): Promise<void> {
    const { sessions } = await this.daemon!.request<{ sessions: ListedSession[] }>(
      Method.sessionList,
      {},
    );
    const now = sessions.find((s) => s.sessionId === session.sessionId && !s.stored);
    if (!now) {
      this.session = undefined;
      this.show({ type: "say", kind: "info", text: "The session ended: your next message starts a new one." });
    } else if (now.provider !== session.provider || now.model !== session.model) {
      this.showSession({ ...session, provider: now.provider ?? session.provider, model: now.model ?? session.model });
    }
  }

  private async complete(text: string): Promise<void> {
    const items = await this.completion.items(this.daemon, this.session, text);
    this.view?.post({ type: "completions", text, items });
  }

  private ensureDaemon(): Promise<Daemon> {
    if (this.daemon?.running) return Promise.resolve(this.daemon);
    if (!this.starting) {
      this.session = undefined;
      const settings = readSettings();
      this.starting = Daemon.start(
        { command: settings.command, env: settings.env, cwd: workspaceCwd(), log: this.log, clientVersion: this.version },
        {
          event: (name, params) => this.event(name, params),
          ask: (params, token) => this.ask(params, token),
          exit: (info) => this.exited(info),
        },
      ).then(
        (daemon) => {
          this.daemon = daemon;
          this.starting = undefined;
          return daemon;
        },
        (error) => {
          this.starting = undefined;
          throw error;
        },
      );
    }
    return this.starting;
  }

  private async ensureSession(): Promise<SessionInfo> {
    const daemon = await this.ensureDaemon();
    if (this.session) return this.session;
    const settings = readSettings();
    const session = await daemon.request<SessionInfo>(Method.sessionNew, {
      cwd: workspaceCwd(),
      ...(settings.provider ? { provider: settings.provider } : {}),
      ...(settings.model ? { model: settings.model } : {}),
      trusted: vscode.workspace.isTrusted,
    });
    this.session = session;
    this.showSession(session);
    return session;
  }

  private showSession(session: SessionInfo): void {
    this.session = session;
    const { sessionId, cwd, provider, model, commands } = session;
    this.show({ type: "session", sessionId, cwd, provider, model, commands, trusted: vscode.workspace.isTrusted });
  }

  private event(name: string, params: EventParams): void {
    if (params.sessionId !== this.session?.sessionId) return;
    const { sessionId: _, ...rest } = params;
    this.show({ ...rest, type: name });
  }

  private async ask(params: AskParams, token: CancellationToken): Promise<{ text: string } | null> {
    this.show({ type: "ask", prompt: params.prompt, kind: params.kind ?? "question", tool: params.tool });
    const answer = await askUser(params, token);
    this.show({ type: "answer", text: answer ?? null });
    return answer === undefined ? null : { text: answer };
  }

  private exited(info: ExitInfo): void {
    this.daemon = undefined;
    this.session = undefined;
    const how = info.signal ? `signal ${info.signal}` : `code ${info.code}`;
    this.crashReported = true;
    this.log.error(`the daemon exited unexpectedly (${how})`);
    this.show({ type: "daemonExited", code: info.code, signal: info.signal, stderr: info.stderr });
  }

  private failed(error: unknown): void {
    if (error instanceof ResponseError && error.data?.kind === ErrorKind.unknownSession) {
      this.session = undefined;
      this.show({ type: "error", text: "The session is gone: your next message starts a new one." });
      return;
    }
    if (this.crashReported) return; // the request failed because the daemon died: said already
    this.log.error(errorText(error));
    this.show({ type: "error", text: errorText(error) });
  }

  private setBusy(busy: boolean): void {
    this.busy = busy;
    this.view?.post({ type: "busy", busy });
  }

  /** Post to the webview and keep it for a replay. */
  private show(message: ViewMessage): void {
    this.view?.post(message);
    this.transcript.add(message);
  }
}

export function workspaceCwd(): string {
  return vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? os.homedir();
}
