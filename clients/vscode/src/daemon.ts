// The daemon process and its JSON-RPC connection (vscode-jsonrpc over stdio).
import { ChildProcess, spawn } from "child_process";
import {
  CancellationToken,
  CancellationTokenSource,
  createMessageConnection,
  MessageConnection,
  StreamMessageReader,
  StreamMessageWriter,
} from "vscode-jsonrpc/node";
import type { Log } from "./log";
import { AskParams, EventParams, Events, Method } from "./protocol";

export interface DaemonOptions {
  command: string[];
  env: Record<string, string>;
  cwd: string;
  log: Log;
  clientVersion: string;
}

export interface ExitInfo {
  code: number | null;
  signal: string | null;
  stderr: string;
}

export interface DaemonHandlers {
  event(name: string, params: EventParams): void;
  ask(params: AskParams, token: CancellationToken): Promise<{ text: string } | null>;
  exit(info: ExitInfo): void;
  /** The other requests the daemon sends (`files/read`, `files/propose`, `fs/*`), by method. */
  requests?: Record<string, (params: any, token: CancellationToken) => unknown>;
}

/** What the extension can do (protocol.md, "Client capabilities"). */
export const CLIENT_CAPABILITIES = {
  input: { ask: true },
  editorState: true,
  fs: { readTextFile: true, writeTextFile: true },
  files: { read: true, apply: true, review: true },
};

const STDERR_TAIL = 4000;
const STOP_GRACE_MS = 2000;

export class Daemon {
  private stopping = false;
  private ready = false;
  private stderrTail = "";
  private stderrLine = "";
  private readonly exitedPromise: Promise<void>;

  private constructor(
    private readonly child: ChildProcess,
    private readonly connection: MessageConnection,
    private readonly options: DaemonOptions,
    handlers: DaemonHandlers,
  ) {
    this.exitedPromise = new Promise((resolve) => {
      child.once("exit", (code, signal) => {
        this.connection.dispose();
        if (this.stderrLine.trim()) options.log.info(`[daemon] ${this.stderrLine}`);
        if (this.ready && !this.stopping) handlers.exit({ code, signal, stderr: this.stderrTail });
        resolve();
      });
    });
    child.stderr?.setEncoding("utf8");
    child.stderr?.on("data", (chunk: string) => {
      this.stderrTail = (this.stderrTail + chunk).slice(-STDERR_TAIL);
      const lines = (this.stderrLine + chunk).split("\n");
      this.stderrLine = lines.pop() ?? "";
      for (const line of lines) if (line.trim()) options.log.info(`[daemon] ${line}`);
    });
    for (const name of Events) {
      connection.onNotification(`event/${name}`, (params: EventParams) => {
        handlers.event(name, params);
      });
    }
    connection.onRequest(Method.inputAsk, (params: AskParams, token) => handlers.ask(params, token));
    for (const [method, handler] of Object.entries(handlers.requests ?? {})) {
      connection.onRequest(method, (params: unknown, token) => handler(params, token));
    }
    connection.onError(([error]) => options.log.error(`[rpc] ${error.message}`));
    connection.listen();
  }

  /** Spawn the daemon and initialize it. Rejects with a readable message if it cannot start. */
  static async start(options: DaemonOptions, handlers: DaemonHandlers): Promise<Daemon> {
    const [program, ...args] = options.command;
    options.log.info(`starting the daemon: ${options.command.join(" ")} (cwd ${options.cwd})`);
    const child = spawn(program, args, {
      cwd: options.cwd,
      env: { ...process.env, ...options.env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    const spawned = new Promise<void>((resolve, reject) => {
      child.once("spawn", resolve);
      child.once("error", reject);
    });
    try {
      await spawned;
    } catch (error) {
      throw new Error(
        `Could not start the elelem daemon (${options.command.join(" ")}): ${(error as Error).message}. ` +
          "Check the elelem.command setting.",
      );
    }
    child.on("error", (error) => options.log.error(`[daemon] ${error.message}`));
    const connection = createMessageConnection(
      new StreamMessageReader(child.stdout!),
      new StreamMessageWriter(child.stdin!),
    );
    const daemon = new Daemon(child, connection, options, handlers);
    try {
      await connection.sendRequest(Method.initialize, {
        processId: process.pid,
        clientInfo: { name: "elelem-vscode", version: options.clientVersion },
        capabilities: CLIENT_CAPABILITIES,
      });
    } catch (error) {
      if (daemon.running) {
        await daemon.stop();
        throw new Error(`The elelem daemon refused to initialize: ${(error as Error).message}`);
      }
      await daemon.exitedPromise;
      throw new Error(
        `The elelem daemon (${options.command.join(" ")}) exited during startup` +
          (daemon.stderrTail.trim() ? `:\n${daemon.stderrTail.trim()}` : "."),
      );
    }
    daemon.ready = true;
    return daemon;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  request<T>(method: string, params: object, token?: CancellationToken): Promise<T> {
    // vscode-jsonrpc counts a trailing `undefined` as a second parameter: pass a token only if any.
    return token
      ? this.connection.sendRequest<T>(method, params, token)
      : this.connection.sendRequest<T>(method, params);
  }

  async notify(method: string, params: object): Promise<void> {
    if (this.running) await this.connection.sendNotification(method, params);
  }

  /** Shut down politely (`shutdown`, `exit`, end of stdin), then kill after a grace period. */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.stopping = true;
    const timeout = new CancellationTokenSource();
    const timer = setTimeout(() => timeout.cancel(), STOP_GRACE_MS);
    try {
      await Promise.race([
        this.connection.sendRequest(Method.shutdown, timeout.token),
        this.exitedPromise,
      ]);
      await this.connection.sendNotification(Method.exit);
    } catch (error) {
      this.options.log.warn(`[daemon] shutdown: ${(error as Error).message}`);
    } finally {
      clearTimeout(timer);
    }
    this.child.stdin?.end();
    const killer = setTimeout(() => this.child.kill("SIGKILL"), STOP_GRACE_MS);
    await this.exitedPromise;
    clearTimeout(killer);
    this.options.log.info("the daemon stopped");
  }
}
