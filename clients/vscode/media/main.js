// The chat webview. It renders `{type}`-tagged messages from the extension (src/chat.ts)
// and posts the user's actions back: ready, send, stop, newSession, complete.
import { diffNodes } from "./highlight.js";
import { render, renderOutput } from "./markdown.js";

const vscode = acquireVsCodeApi();
const $ = (selector) => document.querySelector(selector);
const log = $("#log");
const form = $("#prompt");
const input = $("#input");
const list = $("#completions");
const status = $("#status");
const sendButton = $("#send");
const stopButton = $("#stop");

let busy = false;
let turn = null; // {id, el, last: {kind, el, text}}
let tools = new Map();
let completions = { items: [], index: 0, text: "" };
let asking = null; // the tool card body a permission question went into
let errorShown = false; // an error notice since the last prompt: a failed turn does not repeat it

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function add(node) {
  const stick = log.scrollHeight - log.scrollTop - log.clientHeight < 40;
  log.append(node);
  if (stick) node.scrollIntoView({ block: "end" });
  return node;
}

function currentTurn(turnId) {
  if (!turn || (turnId !== undefined && turn.id !== undefined && turn.id !== turnId)) {
    turn = { id: turnId, el: add(el("section", "turn assistant")), last: null };
  } else if (turn.id === undefined) {
    turn.id = turnId;
  }
  return turn;
}

function delta(kind, message) {
  const t = currentTurn(message.turnId);
  if (!t.last || t.last.kind !== kind) {
    let node;
    if (kind === "thinking") {
      node = el("details", "thinking");
      node.append(el("summary", "", "Thinking"), el("div", "body"));
    } else {
      node = el("div", "markdown");
    }
    t.el.append(node);
    t.last = { kind, el: node, text: "" };
  }
  t.last.text += message.text;
  const block = t.last;
  if (kind === "thinking") block.el.querySelector(".body").textContent = block.text;
  else schedule(block);
}

const pending = new Set();
function schedule(block) {
  if (pending.size === 0) requestAnimationFrame(flush);
  pending.add(block);
}
function flush() {
  for (const block of pending) block.el.innerHTML = render(block.text);
  pending.clear();
  log.lastElementChild?.scrollIntoView({ block: "end" });
}

function formatResult(result) {
  if (result === null || typeof result !== "object") return String(result);
  return Object.entries(result)
    .filter(([key, value]) => key !== "ok" && !(key === "diff" && typeof value === "string"))
    .map(([key, value]) => (typeof value === "string" ? `${key}:\n${value}` : `${key}: ${JSON.stringify(value, null, 2)}`))
    .join("\n");
}

function toolCard(message) {
  const t = currentTurn(message.turnId);
  const card = el("details", "tool running");
  card.dataset.id = message.id;
  const summary = el("summary");
  const args = JSON.stringify(message.arguments ?? {});
  summary.append(el("span", "name", message.name), el("code", "args", args), el("span", "status", "running…"));
  const body = el("div", "body");
  body.append(el("div", "label", "Arguments"), el("pre", "arguments", JSON.stringify(message.arguments ?? {}, null, 2)));
  card.append(summary, body);
  t.el.append(card);
  t.last = { kind: "tool", el: card };
  tools.set(`${message.turnId}:${message.id}`, card);
}

function toolResult(message) {
  const card = tools.get(`${message.turnId}:${message.id}`) ?? (toolCard(message), tools.get(`${message.turnId}:${message.id}`));
  card.classList.remove("running");
  card.classList.add(message.ok ? "ok" : "error");
  card.querySelector(".status").textContent = message.ok ? "ok" : "error";
  const body = card.querySelector(".body");
  body.append(el("div", "label", "Result"), el("pre", "result", formatResult(message.result)));
  if (typeof message.result?.diff === "string") body.append(diffBlock(message.result.diff));
}

/** A unified diff, coloured by line. */
function diffBlock(text) {
  const pre = el("pre", "diff");
  pre.append(...diffNodes(text));
  return pre;
}

/** Tool cards still running when their turn ended (Stop, a failure, a crash) say so. */
function settleTools(status) {
  for (const card of log.querySelectorAll("details.tool.running")) {
    card.classList.remove("running");
    card.classList.add("cancelled");
    card.querySelector(".status").textContent = status;
  }
}

/** Scroll the log so that `node` (the end of a turn) is in view. */
function reveal(node) {
  node.scrollIntoView({ block: "end" });
}

function notice(kind, text, markdown = false) {
  const node = el("div", `notice ${kind}`);
  if (markdown) node.innerHTML = render(text);
  else node.textContent = text;
  (turn ? turn.el : log).append(node);
  node.scrollIntoView({ block: "end" });
  return node;
}

const STOP_REASONS = {
  cancelled: "Stopped.",
  error: "The turn failed.",
  max_turn_requests: "Stopped: the tool-round limit was reached.",
};

const handlers = {
  clear() {
    log.replaceChildren();
    turn = null;
    tools = new Map();
  },
  session(m) {
    status.textContent = `${m.provider} · ${m.model} · ${m.cwd}${m.trusted === false ? " · untrusted: no project plugins" : ""}`;
    status.title = `session ${m.sessionId}`;
  },
  user(m) {
    turn = null;
    errorShown = false;
    add(el("div", "turn user", m.text));
  },
  thinking: (m) => delta("thinking", m),
  saying: (m) => delta("saying", m),
  doing: toolCard,
  result: toolResult,
  say(m) {
    if (m.kind === "error") errorShown = true;
    notice(m.kind ?? "plain", m.text, m.kind === "markdown");
  },
  turnEnd(m) {
    const t = currentTurn(m.turnId);
    if (!t.el.querySelector(".markdown") && m.reply && m.stopReason !== "cancelled" && m.stopReason !== "error") {
      delta("saying", { turnId: m.turnId, text: m.reply });
    }
    settleTools(m.stopReason === "cancelled" ? "cancelled" : "no result");
    const reason = STOP_REASONS[m.stopReason];
    // A provider failure was said already (event/say, kind error): say it only once.
    const text = m.stopReason === "error" && !errorShown ? m.reply : reason;
    if (reason) t.el.append(el("div", `stop-reason ${m.stopReason}`, text));
    if (m.usage) {
      const u = m.usage;
      t.el.append(el("div", "usage", `${u.input_tokens ?? "?"} in · ${u.output_tokens ?? "?"} out`));
    }
    if (reason || m.usage) reveal(t.el.lastElementChild);
    turn = null;
  },
  command(m) {
    turn = null;
    errorShown = false;
    add(el("div", "turn user command", m.line));
  },
  commandOutput(m) {
    const node = el("div", "command-output markdown");
    if (m.output) node.innerHTML = renderOutput(m.output);
    else node.textContent = "(no output)";
    add(node);
  },
  ask(m) {
    // A permission question belongs to the tool call waiting for it: show it in its card.
    const card = m.kind === "permission" && turn ? [...turn.el.querySelectorAll("details.tool.running")].at(-1) : null;
    const node = el("div", "notice ask", `Elelem asks: ${m.prompt}`);
    if (m.kind === "permission" && m.tool && !card) {
      node.append(el("div", "label", `Tool: ${m.tool.name}`), el("pre", "arguments", JSON.stringify(m.tool.arguments ?? {}, null, 2)));
    }
    if (m.tool?.diff) node.append(diffBlock(m.tool.diff));
    asking = card ? card.querySelector(".body") : null;
    if (card) card.open = true;
    (asking ?? (turn ? turn.el : log)).append(node);
    node.scrollIntoView({ block: "end" });
  },
  answer(m) {
    const node = el("div", "notice answer", m.text === null ? "No answer." : `You answered: ${m.text}`);
    (asking ?? (turn ? turn.el : log)).append(node);
    asking = null;
    node.scrollIntoView({ block: "end" });
  },
  history(m) {
    // session/load's history: each turn's tool cards (result, diff, failure) and its reply
    // in one section, as they were drawn live; each redrawn turn gets its own key.
    let redrawn = 0;
    const replying = () => turn ?? currentTurn(`history-${++redrawn}`);
    for (const message of m.messages) {
      if (message.type === "tool") {
        const call = { ...message, turnId: replying().id };
        toolCard(call);
        toolResult(call);
        continue;
      }
      const text = typeof message.content === "string" ? message.content : JSON.stringify(message.content);
      if (message.role === "user") handlers.user({ text });
      else if (message.role === "assistant") {
        if (text) delta("saying", { turnId: replying().id, text });
        turn = null;
      } else if (message.role === "tool") add(el("pre", "history-tool", text));
    }
    turn = null;
  },
  error(m) {
    turn = null;
    add(el("div", "notice error", m.text));
  },
  unsent(m) {
    // The prompt never reached the daemon: give it back, so the user can send it again.
    if (input.value.trim()) return;
    input.value = m.text;
    saveDraft();
    input.focus();
  },
  daemonExited(m) {
    turn = null;
    settleTools("interrupted");
    const how = m.signal ? `signal ${m.signal}` : `code ${m.code}`;
    const next = m.resume ? "Your next message restarts it and resumes this session from its stored copy." : "Your next message restarts it.";
    const node = add(el("div", "notice error daemon-exited", `The elelem daemon exited unexpectedly (${how}). ${next}`));
    reveal(node);
    if (m.stderr) {
      const details = el("details");
      details.append(el("summary", "", "Daemon output"), el("pre", "", m.stderr));
      node.append(details);
    }
  },
  busy(m) {
    busy = m.busy;
    sendButton.disabled = busy;
    stopButton.disabled = !busy;
    document.body.classList.toggle("busy", busy);
  },
  completions(m) {
    if (m.text !== input.value) return;
    showCompletions(m.items, m.text);
  },
};

window.addEventListener("message", (event) => {
  const message = event.data;
  const handler = message && handlers[message.type];
  if (handler) handler(message);
});

// --- prompt box -------------------------------------------------------------------------

function showCompletions(items, text) {
  completions = { items: items.slice(0, 50), index: 0, text };
  list.replaceChildren(
    ...completions.items.map((item, i) => {
      const li = el("li", i === 0 ? "selected" : "");
      li.setAttribute("role", "option");
      li.append(el("span", "label", item.label));
      if (item.detail) li.append(el("span", "detail", item.detail));
      li.addEventListener("mousedown", (event) => {
        event.preventDefault();
        accept(i);
      });
      return li;
    }),
  );
  list.hidden = completions.items.length === 0;
}

function hideCompletions() {
  completions = { items: [], index: 0, text: "" };
  list.hidden = true;
}

/** Enter with the list open: the chosen item completes what is typed, if the list is for it. */
function completesInput() {
  const text = input.value;
  const item = completions.items[completions.index];
  if (!item || completions.text !== text || /\s$/.test(text)) return false;
  const word = text.slice(text.lastIndexOf(" ") + 1);
  return item.label.split(" ").pop().startsWith(word);
}

function select(step) {
  const n = completions.items.length;
  completions.index = (completions.index + step + n) % n;
  [...list.children].forEach((li, i) => li.classList.toggle("selected", i === completions.index));
}

function accept(index) {
  const item = completions.items[index];
  if (!item) return;
  const text = input.value;
  const space = text.lastIndexOf(" ");
  input.value = space < 0 ? `${item.label} ` : text.slice(0, space + 1) + item.label.split(" ").pop();
  hideCompletions();
  input.focus();
  saveDraft();
}

function saveDraft() {
  vscode.setState({ draft: input.value });
}

function submit() {
  const text = input.value.trim();
  if (!text || busy) return;
  vscode.postMessage({ type: "send", text });
  input.value = "";
  hideCompletions();
  saveDraft();
}

input.addEventListener("input", () => {
  saveDraft();
  const text = input.value;
  if (text.startsWith("/") && !text.includes("\n")) vscode.postMessage({ type: "complete", text });
  else hideCompletions();
});

input.addEventListener("keydown", (event) => {
  if (!list.hidden) {
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      select(event.key === "ArrowDown" ? 1 : -1);
      event.preventDefault();
      return;
    }
    if (event.key === "Tab") {
      accept(completions.index);
      event.preventDefault();
      return;
    }
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      // One Enter runs the command: accept the highlighted completion, then send.
      if (completesInput()) accept(completions.index);
      else hideCompletions();
      event.preventDefault();
      submit();
      return;
    }
    if (event.key === "Escape") {
      hideCompletions();
      event.preventDefault();
      return;
    }
  }
  if (event.key === "Escape" && busy) {
    event.preventDefault();
    vscode.postMessage({ type: "stop" });
    return;
  }
  if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    submit();
  }
});

form.addEventListener("submit", (event) => {
  event.preventDefault();
  submit();
});
stopButton.addEventListener("click", () => vscode.postMessage({ type: "stop" }));
$("#new").addEventListener("click", () => vscode.postMessage({ type: "newSession" }));

log.addEventListener("click", (event) => {
  const button = event.target.closest?.("button.copy");
  if (!button) return;
  const code = button.parentElement.querySelector("code");
  navigator.clipboard?.writeText(code ? code.textContent : "");
  button.textContent = "Copied";
  setTimeout(() => (button.textContent = "Copy"), 1200);
});

input.value = vscode.getState()?.draft ?? "";
vscode.postMessage({ type: "ready" });
