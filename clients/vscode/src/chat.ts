// Chat: one daemon, the current session, and the transcript the webview shows.
// It forwards input and renders events; the agent, its tools and its commands live in the daemon.
import * as os from "os";
import * as vscode from "vscode";
import { CancellationToken } from "vscode-jsonrpc/node";
import { Attention, type Shown } from "./attention";
import { Completion } from "./completion";
import { mcpServers, readSettings } from "./config";
import { Daemon, ExitInfo } from "./daemon";
import { bridge } from "./input";
import { pick as pickModelLine } from "./models";
import { Questions } from "./questions";
import { Landed, propose, readFile, readTextFile, writeTextFile } from "./files";
import { Reviews } from "./review";
import { AppliedEdit, CheckpointTurn, checkpoints, rewindTurn } from "./rewind";
import { Attachment, EditorStateSender, fromEditor } from "./context";
import { openStored, Remembered } from "./stored";
import { Transcript } from "./transcript";
import { ContextEdits, contentText } from "./contextEdit";
import type { Log } from "./log";
import {
  AskParams,
  ErrorKind,
  EventParams,
  ListedSession,
  LoadedSession,
  ModeInfo,
  Message,
  Method,
  SessionInfo,
  TrustInfo,
  TurnResult,
  errorText,
  isKind,
} from "./protocol";

/** A `{type}`-tagged message for the webview (media/main.js renders each type). */
export interface ViewMessage {
  type: string;
  [key: string]: unknown;
}

export interface View extends Partial<Shown> {
  post(message: ViewMessage): void;
}

/** A stored session to reopen when the daemon comes back (after a crash or a restart). */
interface Resume {
  sessionId: string;
  /** The panel does not show its conversation: redraw it from the stored copy. */
  redraw: boolean;
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
  private restoring?: Promise<void>;
  private resume?: Resume;
  private readonly completion: Completion;
  private readonly remembered: Remembered;
  private readonly reviews: Reviews;
  private readonly editorState: EditorStateSender;
  private readonly contextEdits = new ContextEdits();
  /** A waiting question's badge, status bar item and notification (attention.ts). */
  private readonly attention = new Attention(
    () => (this.view?.visible && this.view.badge ? (this.view as Shown) : undefined),
    () => vscode.commands.executeCommand("elelem.chat.focus"),
  );
  private readonly questions = new Questions(
    (message) => this.show(message),
    () => this.view !== undefined,
    this.attention,
  );
  /** The MCP servers' latest states (`event/mcp`), for a header redrawn after a rewind. */
  private mcp?: SessionInfo["mcp"];
  /** The changes each turn applied to documents (the text before and after): a rewind takes them out of the buffers. */
  private readonly appliedEdits = new Map<number, AppliedEdit[]>();

  constructor(
    private readonly log: Log,
    private readonly version: string,
    memory?: vscode.Memento,
  ) {
    this.completion = new Completion(log);
    this.remembered = new Remembered(memory);
    this.editorState = new EditorStateSender((state) => {
      if (this.daemon?.running) void this.daemon.notify(Method.editorState, state).catch(() => undefined);
    });
    this.reviews = new Reviews({
      started: (review) =>
        this.show({
          type: "review",
          reviewId: review.id,
          turnId: review.params.turnId,
          toolCallId: review.params.toolCallId,
          path: vscode.workspace.asRelativePath(review.params.path),
          newFile: review.params.oldText === null,
          hunks: review.params.hunks.map((h) => ({ id: h.id, diff: h.diff })),
        }),
      ended: (review, decision) =>
        this.show({
          type: "reviewDone",
          reviewId: review.id,
          accepted: decision?.accepted ?? null,
          total: review.params.hunks.length,
          acceptAllForTurn: decision?.acceptAllForTurn ?? false,
        }),
    });
  }

  get sessionId(): string | undefined {
    return this.session?.sessionId;
  }

  get daemonPid(): number | undefined {
    return this.daemon?.pid;
  }

  /**
   * `elelem.prestart` (activation, `onStartupFinished`): start the daemon and open a session
   * in the background, so the chat is ready when it is opened. A remembered session is left
   * for the view to reopen (`restore`): only the daemon starts. A failure is logged; the
   * first message meets it again and shows it.
   */
  prestart(): void {
    if (this.remembered.sessionId) {
      Promise.resolve()
        .then(() => this.ensureDaemon())
        .catch((error) => this.log.warn(`prestart: ${errorText(error)}`));
      return;
    }
    this.restoring = Promise.resolve()
      .then(() => this.ensureSession())
      .then(
        () => undefined,
        (error) => this.log.warn(`prestart: ${errorText(error)}`),
      )
      .finally(() => (this.restoring = undefined));
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
        this.view?.post({ type: "scrollEnd" }); // a reloaded chat opens at its end
        this.restore();
        return;
      case "send":
        return this.send(String(message.text ?? ""), attachmentsOf(message.attachments));
      case "attach": {
        const chip = fromEditor(String(message.what ?? ""));
        if (typeof chip === "string") this.view?.post({ type: "attachError", text: chip });
        else this.view?.post({ type: "chip", ...chip });
        return;
      }
      case "stop":
        return this.stop();
      case "newSession":
        return this.newSession();
      case "complete":
        return this.complete(String(message.text ?? ""));
      case "pickMode":
        return this.pickMode().catch((error) => this.failed(error));
      case "pickModel":
        return this.pickModel().catch((error) => this.failed(error));
      case "rewind":
        return this.rewind(Number(message.turnId)).catch((error) => this.failed(error));
      case "askAnswer":
        return this.questions.answered(Number(message.askId), String(message.answer ?? ""));
      case "review":
        return this.reviews.act(
          Number(message.reviewId),
          String(message.action) as Parameters<Reviews["act"]>[1],
          Array.isArray(message.hunks) ? message.hunks.map(Number) : [],
        );
      default:
        this.log.warn(`unknown message from the webview: ${JSON.stringify(message)}`);
    }
  }

  /** Send a prompt, or run a slash command when the text starts with `/`. */
  async send(text: string, attachments: Attachment[] = []): Promise<void> {
    text = text.trim();
    if (!text) return;
    if (this.busy) return this.steer(text, attachments);
    let done = () => {};
    this.idle = new Promise((resolve) => (done = resolve));
    this.setBusy(true);
    this.crashReported = false;
    try {
      await this.restoring;
      let session: SessionInfo;
      try {
        session = await this.ensureSession();
      } catch (error) {
        // The prompt never reached the daemon: say why and give it back to the prompt box.
        this.failed(error);
        this.view?.post({ type: "unsent", text, ...(attachments.length ? { attachments } : {}) });
        return;
      }
      const edit = /^\/context\s+edit(?:\s+(\S+))?\s*$/.exec(text);
      if (edit && attachments.length === 0) await this.editMessage(text, edit[1]);
      else if (text.startsWith("/") && attachments.length === 0) await this.command(session, text);
      else await this.turn(session, text, attachments);
    } catch (error) {
      if (isKind(error, ErrorKind.invalidAttachment)) {
        // Refused before anything was sent or kept: say why and give the prompt back.
        this.show({ type: "refused", text: errorText(error) });
        this.view?.post({ type: "unsent", text, ...(attachments.length ? { attachments } : {}) });
      } else this.failed(error);
    } finally {
      this.setBusy(false);
      done();
    }
  }

  /**
   * A message typed while a turn runs is a steer (`session/steer`): the turn takes it into
   * its next request (`event/steer`). When the turn ended meanwhile (-32006 `not_running`)
   * it goes as a turn of its own. A command or attachments cannot steer: refused, kept.
   */
  private async steer(text: string, attachments: Attachment[]): Promise<void> {
    const unsent = () => this.view?.post({ type: "unsent", text, ...(attachments.length ? { attachments } : {}) });
    const session = this.session;
    if (text.startsWith("/") || attachments.length || !session || !this.daemon?.running) {
      const why = text.startsWith("/") ? "a command waits for the turn to end" : attachments.length ? "attachments cannot go with a steer" : "the session is still starting";
      this.show({ type: "error", text: `A turn is still running: ${why}. Press Stop or wait for it.` });
      unsent();
      return;
    }
    try {
      await this.daemon.request(Method.sessionSteer, { sessionId: session.sessionId, text });
      this.show({ type: "steerQueued", text });
    } catch (error) {
      if (isKind(error, ErrorKind.notRunning)) {
        await this.idle; // the turn (or command) the client still sees as running ends
        if (!this.busy) return this.send(text);
      }
      this.show({ type: "error", text: `Steer not sent: ${errorText(error)}` });
      unsent();
    }
  }

  /**
   * `/context edit N` (N as `/context` numbers them, 1 the system prompt): the message
   * opens in an untitled document; "Elelem: Apply Context Edit" sends it back
   * (`session/editContext`; an empty document deletes the message).
   */
  private async editMessage(line: string, place: string | undefined): Promise<void> {
    this.show({ type: "command", line });
    const n = Number(place);
    if (!place || !Number.isInteger(n) || n < 1) {
      this.show({ type: "error", text: "Usage: /context edit N (N as /context numbers the messages; 1 is the system prompt, which cannot be edited)." });
      return;
    }
    try {
      const messages = await this.context();
      if (n === 1 || n > messages.length) {
        this.show({ type: "error", text: n === 1 ? "The system prompt cannot be edited." : `No message ${n}: the context holds ${messages.length}.` });
        return;
      }
      const message = messages[n - 1];
      await this.contextEdits.open(this.session!.sessionId, n - 1, message.role, contentText(message.content));
      this.show({ type: "commandOutput", line, output: `Message ${n} (${message.role}) is open in an editor: change it, then run "Elelem: Apply Context Edit" (empty deletes it).` });
    } catch (error) {
      this.failed(error);
    }
  }

  /** "Elelem: Apply Context Edit": the edited message back to the daemon (`session/editContext`). */
  async applyContextEdit(document?: vscode.TextDocument): Promise<void> {
    const edit = this.contextEdits.find(document ?? vscode.window.activeTextEditor?.document);
    if (!edit) throw new Error("Open a message with /context edit N first: this editor holds none.");
    if (!this.daemon?.running || this.session?.sessionId !== edit.sessionId) throw new Error("That message belongs to a session that is not open any more.");
    const content = edit.document.getText();
    try {
      await this.daemon.request<{ messages: Message[] }>(Method.sessionEditContext, { sessionId: edit.sessionId, index: edit.index, content });
    } catch (error) {
      const errors = (error as { data?: { errors?: unknown } }).data?.errors;
      const detail = Array.isArray(errors) && errors.length ? `: ${errors.join("; ")}` : "";
      const text = `Context edit not applied: ${errorText(error)}${detail}`;
      this.show({ type: "error", text });
      throw new Error(text);
    }
    this.contextEdits.forget(edit.document);
    const what = content.trim() ? "replaced" : "deleted";
    this.show({ type: "say", kind: "info", text: `Message ${edit.index + 1} ${what}: the model sees the edited context from the next turn.` });
    void vscode.window.showInformationMessage(`Elelem: message ${edit.index + 1} ${what}.`);
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
    await this.restoring;
    const old = this.session;
    this.session = undefined;
    this.resume = undefined;
    this.remembered.set(undefined);
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
  async load(sessionId: string, waitForLock = false): Promise<void> {
    if (this.busy) throw new Error("A turn is still running: press Stop first.");
    const daemon = await this.ensureDaemon();
    const loaded = await openStored(daemon, sessionId, waitForLock);
    this.resume = undefined;
    const old = this.session;
    if (old && old.sessionId !== loaded.sessionId) {
      await daemon
        .request(Method.sessionClose, { sessionId: old.sessionId })
        .catch((error) => this.log.warn(`session/close: ${errorText(error)}`));
    }
    this.transcript.clear();
    this.view?.post({ type: "clear" });
    this.showSession(loaded);
    this.show({ type: "history", messages: loaded.history ?? loaded.messages ?? [] });
    if (loaded.plan?.entries) this.show({ type: "plan", entries: loaded.plan.entries });
    await this.markTurns(loaded);
  }

  /** The mode picker (issue 20): the session's modes, then `session/setMode`. */
  async pickMode(): Promise<void> {
    const session = await this.ensureSession();
    const mode = session.mode;
    if (!mode?.available?.length) {
      void vscode.window.showInformationMessage("Elelem: this daemon has no modes to pick from.");
      return;
    }
    const picked = await vscode.window.showQuickPick(
      mode.available.map((m) => ({ label: m.name, description: m.id === mode.current ? "(current)" : m.id, detail: m.description, id: m.id })),
      { title: "Elelem: the session's mode", placeHolder: "What the agent may do: the mode applies from its next request to the model" },
    );
    if (!picked || picked.id === mode.current) return;
    const result = await this.daemon!.request<{ mode: ModeInfo }>(Method.sessionSetMode, { sessionId: session.sessionId, modeId: picked.id });
    if (this.session?.sessionId === session.sessionId) this.session.mode = result.mode;
    this.show({ type: "mode", mode: result.mode });
  }

  /** The model picker (models.ts): the choice runs `/model NAME` or `/provider NAME` in the chat. */
  async pickModel(): Promise<void> {
    const session = await this.ensureSession();
    const line = await pickModelLine(this.daemon!, session);
    if (line) await this.send(line);
  }

  /** The session's turns that a checkpoint picker offers (`session/checkpoints`). */
  async checkpoints(): Promise<CheckpointTurn[]> {
    const session = await this.ensureSession();
    return (await checkpoints(this.daemon!, session.sessionId)).turns;
  }

  /**
   * Go back to before a turn (the last one when none is given): files and conversation,
   * after the user confirmed what changes (rewind.ts); then redraw the chat from `messages`.
   */
  async rewind(turnId?: number): Promise<void> {
    if (this.busy) {
      this.show({ type: "error", text: "A turn is still running: press Stop or wait for it, then rewind." });
      return;
    }
    const session = await this.ensureSession();
    const turns = await this.checkpoints();
    if (turnId === undefined || Number.isNaN(turnId)) {
      turnId = turns.at(-1)?.turnId;
      if (turnId === undefined) {
        void vscode.window.showInformationMessage("Elelem: nothing to undo: this session has no turn yet.");
        return;
      }
    }
    const undone = turns.filter((t) => t.turnId >= turnId!).flatMap((t) => t.files);
    const edits = [...this.appliedEdits].filter(([turn]) => turn >= turnId!).sort(([a], [b]) => a - b).flatMap(([, e]) => e);
    const numberOf = (id: number) => turns.find((t) => t.turnId === id)?.number ?? id; // as the user counts turns
    const shown = numberOf(turnId);
    const result = await rewindTurn(this.daemon!, session.sessionId, session.cwd, turnId, this.log, undone, edits, numberOf);
    if (!result) return;
    for (const turn of [...this.appliedEdits.keys()]) if (turn >= turnId) this.appliedEdits.delete(turn);
    if (result.conversation && this.transcript.cutAtTurn(turnId)) {
      // The kept turns as they were drawn: tool cards, diffs, plan and the header's states.
      const mcp = this.mcp;
      this.view?.post({ type: "clear" });
      for (const old of this.transcript.all()) this.view?.post(old);
      if (mcp) this.show({ type: "mcp", mcp }); // states as they are now, not as the cut left them
      if (this.session?.mode) this.show({ type: "mode", mode: this.session.mode });
    } else if (result.messages) {
      const mcp = this.mcp;
      this.transcript.clear();
      this.view?.post({ type: "clear" });
      this.showSession(session);
      if (mcp) {
        this.mcp = mcp;
        this.show({ type: "mcp", mcp });
      }
      this.show({ type: "history", messages: result.messages });
    }
    const files = result.files;
    const changed = files ? files.restored.length + files.created.length + files.deleted.length : 0;
    this.show({
      type: "say",
      kind: "info",
      text: `Rewound to before turn ${shown}` + (files ? `: ${changed} file${changed === 1 ? "" : "s"} restored.` : " (the conversation only)."),
    });
    await this.markTurns(session);
  }

  private edited(turnId: unknown, path: unknown, before: string, after: string): void {
    if (typeof turnId !== "number" || typeof path !== "string") return;
    // Bounded: a huge text is not kept (a rewind then reloads that document from the disk
    // alone), and only the last 50 turns' changes are.
    if (before.length + after.length > 16_000_000) return;
    if (!this.appliedEdits.has(turnId)) this.appliedEdits.set(turnId, []);
    while (this.appliedEdits.size > 50) this.appliedEdits.delete(Math.min(...this.appliedEdits.keys()));
    this.appliedEdits.get(turnId)!.push({ path, before, after });
  }

  /** Tell the webview which user message is which turn, so each gets its Restore action. */
  private async markTurns(session: SessionInfo): Promise<void> {
    try {
      const { turns } = await checkpoints(this.daemon!, session.sessionId);
      this.show({ type: "turns", turns: turns.map((t) => ({ turnId: t.turnId, prompt: t.prompt })) });
    } catch (error) {
      this.log.warn(`session/checkpoints: ${errorText(error)}`);
    }
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.idle;
    await this.restoring;
    await this.shutdown();
    if (this.session) this.resume = { sessionId: this.session.sessionId, redraw: false };
    this.session = undefined;
    const text = this.resume
      ? "The daemon restarts with your next message, and resumes this session."
      : "The daemon restarts with your next message.";
    this.show({ type: "say", kind: "info", text });
  }

  async dispose(): Promise<void> {
    this.reviews.dispose();
    this.editorState.dispose();
    await this.shutdown();
  }

  private async shutdown(): Promise<void> {
    const daemon = this.daemon ?? (await this.starting?.catch(() => undefined));
    this.daemon = undefined;
    this.starting = undefined;
    await daemon?.stop();
  }

  private async turn(session: SessionInfo, text: string, attachments: Attachment[]): Promise<void> {
    const user: ViewMessage = { type: "user", text, attachments: attachments.map(chipOf) };
    this.show(user);
    const result = await this.daemon!.request<TurnResult>(Method.sessionTurn, {
      sessionId: session.sessionId,
      text,
      ...(attachments.length ? { attachments: attachments.map(({ label: _, ...a }) => a) } : {}),
    });
    if (typeof result.turnId === "number") user.turnId = result.turnId; // a rewind cuts the transcript here
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
      this.remembered.set(undefined);
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
      this.remembered.set(undefined);
      this.show({ type: "say", kind: "info", text: "The session ended: your next message starts a new one." });
    } else if (now.provider !== session.provider || now.model !== session.model || now.servedModel !== session.servedModel) {
      // a /model or /provider switch: the served model is asked anew
      this.showSession({ ...session, provider: now.provider ?? session.provider, model: now.model ?? session.model, servedModel: now.servedModel });
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
          requests: {
            [Method.filesRead]: (params) => readFile(params),
            [Method.filesPropose]: async (params, token) => {
              const landed: Landed = {};
              const result = await propose(params, this.reviews, bridge(token), this.log, landed);
              if (result?.applied && typeof result.text === "string") this.edited(params.turnId, params.path, params.oldText ?? "", result.text);
              if (result?.applied && landed.unsaved && landed.unsaved !== "setting") {
                const name = vscode.workspace.asRelativePath(params.path);
                const why = landed.unsaved === "userEdits" ? "it also holds your own unsaved edits" : "VS Code could not save it";
                this.show({
                  type: "say",
                  kind: "info",
                  turnId: params.turnId,
                  text: `${name}: the agent's change is in the editor but not saved (${why}). The agent was told its commands see the old file; save it (Ctrl+S) for them to see the change.`,
                });
              }
              return result;
            },
            [Method.fsReadTextFile]: (params) => readTextFile(params),
            [Method.fsWriteTextFile]: (params) => writeTextFile(params),
          },
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
    const resumed = await this.resumeStored(daemon);
    if (resumed) return resumed;
    const settings = readSettings();
    const session = await daemon.request<SessionInfo>(Method.sessionNew, {
      cwd: workspaceCwd(),
      ...(settings.provider ? { provider: settings.provider } : {}),
      ...(settings.model ? { model: settings.model } : {}),
      trusted: vscode.workspace.isTrusted,
      ...mcpServers(),
    });
    this.session = session;
    this.showSession(session);
    this.editorState.schedule();
    return session;
  }

  /**
   * After a crash or a restart, reopen the session the panel shows from its stored copy,
   * and say so. A session that was never stored (nothing was kept yet) cannot come back:
   * say that a new one starts. Undefined when there is nothing to resume.
   */
  private async resumeStored(daemon: Daemon): Promise<SessionInfo | undefined> {
    const resume = this.resume;
    if (!resume) return undefined;
    let loaded: LoadedSession;
    try {
      loaded = await openStored(daemon, resume.sessionId, true);
    } catch (error) {
      if (!isKind(error, ErrorKind.unknownSession)) throw error; // kept: the next message tries again
      this.resume = undefined;
      this.show({
        type: "say",
        kind: "info",
        text: "The previous session was never stored (nothing was said in it yet): this is a new session.",
      });
      return undefined;
    }
    this.resume = undefined;
    this.showSession(loaded);
    if (resume.redraw) this.show({ type: "history", messages: loaded.history ?? loaded.messages ?? [] });
    this.show({ type: "say", kind: "info", text: "Resumed the session from its stored copy: the model sees the conversation so far." });
    return loaded;
  }

  /**
   * A new webview with nothing to show (a reloaded window): reopen the session it showed
   * last, from its stored copy. Nothing starts when there is no such session.
   */
  private restore(): void {
    const sessionId = this.remembered.sessionId;
    if (!sessionId || this.session || this.resume || this.busy || this.restoring || this.transcript.all().length) return;
    this.restoring = this.load(sessionId, true)
      .catch((error) => {
        if (isKind(error, ErrorKind.unknownSession)) {
          this.log.info(`the session ${sessionId} was never stored: nothing to restore`);
          this.remembered.set(undefined);
          return;
        }
        this.resume = { sessionId, redraw: true }; // the next message tries again
        this.failed(error);
      })
      .finally(() => (this.restoring = undefined));
  }

  private showSession(session: SessionInfo): void {
    if (this.remembered.sessionId !== session.sessionId) this.appliedEdits.clear();
    this.session = session;
    this.remembered.set(session.sessionId);
    const { sessionId, cwd, provider, commands, mcp, mode } = session;
    const model = session.servedModel || session.model; // the model that answers (issue 40)
    this.mcp = mcp;
    this.show({ type: "session", sessionId, cwd, provider, model, commands, trusted: vscode.workspace.isTrusted, mode });
    if (mcp && (mcp.servers?.length || mcp.problems?.length)) this.show({ type: "mcp", mcp });
    const trust = trustLine(session.trust);
    if (trust) this.show({ type: "say", kind: "info", text: trust });
  }

  private event(name: string, params: EventParams): void {
    if (params.sessionId !== this.session?.sessionId) return;
    if (name === "mode" && params.mode) this.session.mode = params.mode as ModeInfo;
    if (name === "mcp" && params.mcp) this.mcp = params.mcp as SessionInfo["mcp"];
    const { sessionId: _, ...rest } = params;
    this.show({ ...rest, type: name });
    const served = name === "usage" && typeof params.servedModel === "string" ? params.servedModel : undefined;
    if (served && served !== this.session.servedModel) this.showSession({ ...this.session, servedModel: served });
  }

  /** `input/ask`: in the chat's card (a permission question) or a quick pick (questions.ts). */
  private async ask(params: AskParams, token: CancellationToken): Promise<{ text: string } | null> {
    const answer = await this.questions.ask(params, token);
    return answer === undefined ? null : { text: answer };
  }

  private exited(info: ExitInfo): void {
    this.daemon = undefined;
    if (this.session) this.resume = { sessionId: this.session.sessionId, redraw: false };
    this.session = undefined;
    const how = info.signal ? `signal ${info.signal}` : `code ${info.code}`;
    this.crashReported = true;
    this.log.error(`the daemon exited unexpectedly (${how})`);
    this.show({
      type: "daemonExited",
      code: info.code,
      signal: info.signal,
      stderr: info.stderr,
      resume: this.resume !== undefined,
    });
  }

  private failed(error: unknown): void {
    if (isKind(error, ErrorKind.unknownSession)) {
      this.session = undefined;
      this.remembered.set(undefined);
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

const ATTACHMENT_TYPES = new Set(["file", "folder", "selection", "diagnostics", "image", "symbol"]);

/** The webview's attachments: objects with a known `type` (the daemon checks the rest). */
function attachmentsOf(value: unknown): Attachment[] {
  if (!Array.isArray(value)) return [];
  return value.filter((a): a is Attachment => !!a && typeof a === "object" && ATTACHMENT_TYPES.has((a as Attachment).type));
}

/** What the user message shows of an attachment (never an image's bytes). */
function chipOf(a: Attachment): { type: string; label: string } {
  const label = typeof a.label === "string" ? a.label : typeof a.path === "string" ? vscode.workspace.asRelativePath(a.path) : a.type;
  return { type: a.type, label };
}

export function workspaceCwd(): string {
  return vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? os.homedir();
}

/**
 * One chat line on the workspace's own plugins, rules, modes, skills and MCP servers when the
 * session opens (issue 29): what was loaded, or what was not and that trusting the workspace
 * (VS Code's own decision, `Workspaces: Manage Workspace Trust`) would load it. The list is
 * the daemon's `trust.loads` (the one home of that rule); nothing when it is empty.
 */
export function trustLine(trust: TrustInfo | undefined): string | undefined {
  const loads = Array.isArray(trust?.loads) ? trust.loads.map(String) : [];
  if (!trust || loads.length === 0) return undefined;
  const list = loads.join("; ");
  return trust.trusted
    ? `Loaded from the trusted workspace: ${list}`
    : `The workspace is not trusted, so this was not loaded: ${list}. Trusting the workspace (Workspaces: Manage Workspace Trust) would load it, in a new session.`;
}
