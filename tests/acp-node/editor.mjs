// A test editor built on the official TypeScript ACP SDK (@agentclientprotocol/sdk 2.x):
// it spawns the real `elelem daemon --acp`, records every session/update, answers
// permission requests from a script and serves files from in-memory buffers.

import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";
import * as unstable from "@agentclientprotocol/sdk/unstable";

export { acp, unstable };
export const TIMEOUT = 20_000;
const PYTHON = process.env.ELELEM_PYTHON || "python3";

export class Editor {
  // unstable: the SDK's unstable entry point (session/fork, systemPrompt)
  constructor({ fs = false, answers = [], unstable: newest = false } = {}) {
    this.fs = fs;
    this.sdk = newest ? unstable : acp;
    this.answers = [...answers]; // optionIds to pick in turn; null = cancelled
    this.updates = [];
    this.permissions = [];
    this.buffers = new Map();
    this.writes = [];
    this.waiters = [];
  }

  of(kind) {
    return this.updates.map((n) => n.update).filter((u) => u.sessionUpdate === kind);
  }

  said(kind = "agent_message_chunk") {
    return this.of(kind).map((u) => u.content.text).join("");
  }

  // Resolves once check() holds, re-checked on every update.
  until(check) {
    if (check()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("timed out waiting for updates")), TIMEOUT);
      this.waiters.push(() => {
        if (!check()) return false;
        clearTimeout(timer);
        resolve();
        return true;
      });
    });
  }

  wake() {
    this.waiters = this.waiters.filter((waiter) => !waiter());
  }

  app() {
    const sdk = this.sdk;
    return sdk
      .client({ name: "node-test" })
      .onNotification(sdk.methods.client.session.update, ({ params }) => {
        this.updates.push(params);
        this.wake();
      })
      .onRequest(sdk.methods.client.session.requestPermission, ({ params }) => {
        this.permissions.push(params);
        this.wake();
        const answer = this.answers.length ? this.answers.shift() : null;
        if (answer === null) return { outcome: { outcome: "cancelled" } };
        return { outcome: { outcome: "selected", optionId: answer } };
      })
      .onRequest(sdk.methods.client.fs.readTextFile, ({ params }) => {
        if (!this.buffers.has(params.path)) throw sdk.RequestError.resourceNotFound(params.path);
        return { content: this.buffers.get(params.path) };
      })
      .onRequest(sdk.methods.client.fs.writeTextFile, ({ params }) => {
        this.writes.push([params.path, params.content]);
        this.buffers.set(params.path, params.content);
        return {};
      });
  }
}

// Runs op(ctx, init, project) against a fresh daemon whose HOME and cwd are temporary.
// `env`: more of the daemon's environment (a provider's URL).
export async function withDaemon(editor, op, { home, env: more = {} } = {}) {
  const root = realpathSync(mkdtempSync(path.join(tmpdir(), "elelem-acp-")));
  const project = path.join(root, "project");
  mkdirSync(project);
  home = home ?? path.join(root, "home");
  mkdirSync(home, { recursive: true });
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([key]) => !key.startsWith("ELELEM_")),
  );
  const child = spawn(PYTHON, ["-m", "elelem_daemon", "daemon", "--acp"], {
    cwd: project,
    env: {
      ...env,
      HOME: home,
      ELELEM_PROVIDER: "stub", // whatever keys this machine has
      XDG_CONFIG_HOME: path.join(home, ".config"),
      XDG_STATE_HOME: path.join(home, ".local", "state"),
      ...more,
    },
    stdio: ["pipe", "pipe", "inherit"],
  });
  const exited = new Promise((resolve) => child.on("exit", resolve));
  const stream = editor.sdk.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
  try {
    return await editor.app().connectWith(stream, async (ctx) => {
      const init = await ctx.request(editor.sdk.methods.agent.initialize, {
        protocolVersion: editor.sdk.PROTOCOL_VERSION,
        clientCapabilities: { fs: { readTextFile: editor.fs, writeTextFile: editor.fs } },
        clientInfo: { name: "node-test", version: "1" },
      });
      return await op(ctx, init, project, root);
    });
  } finally {
    child.stdin.destroy();
    const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
    await exited;
    clearTimeout(timer);
  }
}

export async function newSession(ctx, cwd) {
  return ctx.request(acp.methods.agent.session.new, { cwd, mcpServers: [] });
}

export function prompt(ctx, sessionId, ...blocks) {
  const content = blocks.map((b) => (typeof b === "string" ? { type: "text", text: b } : b));
  return ctx.request(acp.methods.agent.session.prompt, { sessionId, prompt: content });
}
