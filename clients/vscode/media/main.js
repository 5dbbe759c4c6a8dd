// The chat webview. It renders `{type}`-tagged messages from the extension (src/chat.ts)
// and posts the user's actions back: ready, send, stop, newSession, complete.
import { diffNodes } from "./highlight.js";
import { render, renderOutput } from "./markdown.js";
import { parts as meterParts, short, title as meterTitle } from "./meter.js";

const vscode = acquireVsCodeApi();
const $ = (selector) => document.querySelector(selector);
const log = $("#log");
const form = $("#prompt");
const input = $("#input");
const list = $("#completions");
const status = $("#status");
const sendButton = $("#send");
const stopButton = $("#stop");

/** The per-turn footer's meter: ` · 15/1.0k ctx (1%) · $0.0108`. */
function meterText(m) {
  if (!m) return "";
  let text = "";
  if (typeof m.used === "number" && typeof m.size === "number" && m.size > 0) {
    text += ` · ${short(m.used)}/${short(m.size)} ctx (${Math.floor((m.used * 100) / m.size)}%)`;
  }
  const cost = m.session && m.session.cost;
  if (typeof cost === "number") text += ` · $${cost.toFixed(4)}`;
  return text;
}

let meter = null; // the running turn's event/usage, until its turnEnd

let busy = false;
const placeholder = input.placeholder;
let turn = null; // {id, el, last: {kind, el, text}}
let tools = new Map();
let completions = { items: [], index: 0, text: "" };
let asking = null; // the tool card body a permission question went into
let errorShown = false;
let chips = []; // attachments for the next prompt: {attachment, label}
let lastUser = null; // the user message of the running turn: its turnId comes with the turn's end // an error notice since the last prompt: a failed turn does not repeat it

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

// The log follows its end until the user scrolls up from it. A log laid out again (the view
// shown after Reload Window, its size changed) or grown (the Restore actions added after a
// redraw) goes back to its end when it followed it, so a chat redrawn while hidden opens at
// its last message (issue 40).
let pinned = true;
log.addEventListener("scroll", () => {
  pinned = log.scrollHeight - log.scrollTop - log.clientHeight < 40;
});
const follow = () => {
  if (pinned) log.scrollTop = log.scrollHeight;
};
new ResizeObserver(follow).observe(log);
new MutationObserver(follow).observe(log, { childList: true, subtree: true, characterData: true });
function scrollEnd() {
  pinned = true;
  log.scrollTop = log.scrollHeight;
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

/** A sub-agent's event (`parentToolCallId`): drawn inside its task call's card. */
function childHost(message) {
  if (!message.parentToolCallId) return null;
  const card = tools.get(`${message.turnId}:${message.parentToolCallId}`);
  if (!card) return null;
  let children = card.querySelector(":scope > .body > .children");
  if (!children) {
    children = el("div", "children");
    children.append(el("div", "label", "Sub-agent"));
    card.querySelector(".body").append(children);
    card.open = true;
  }
  if (!children.host) children.host = { id: message.turnId, el: children, last: null, child: true };
  return children.host;
}

function delta(kind, message) {
  const t = childHost(message) ?? currentTurn(message.turnId);
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
  const t = childHost(message) ?? currentTurn(message.turnId);
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
  tools.set(toolKey(message), card);
}

/** A tool card's key: the turn, the parent task call for a sub-agent's call, and the id. */
function toolKey(m) {
  return `${m.turnId}:${m.parentToolCallId ? `${m.parentToolCallId}/` : ""}${m.id}`;
}

function toolResult(message) {
  const card = tools.get(toolKey(message)) ?? (toolCard(message), tools.get(toolKey(message)));
  card.classList.remove("running");
  card.classList.add(message.ok ? "ok" : "error");
  card.querySelector(".status").textContent = message.ok ? "ok" : "error";
  // a failed call says its exit status, as the terminal and Neovim do (issue 40: `list` of a
  // missing path exits 2); a status inside the tool's expected set (grep finding nothing) is ok
  const exit = message.result?.exit_status;
  if (!message.ok && Number.isInteger(exit)) card.querySelector(".status").after(el("span", "exit", `✗ exit ${exit}`));
  const body = card.querySelector(".body");
  body.append(el("div", "label", "Result"), el("pre", "result", formatResult(message.result)));
  if (typeof message.result?.diff === "string") body.append(diffBlock(message.result.diff));
  // A review decided, then the document changed before it landed: nothing was applied.
  const decided = card.querySelector(".review.done .review-decision");
  if (decided && !message.ok && /^conflict/.test(String(message.result?.error ?? ""))) {
    decided.textContent = "Not applied: the file changed during the review (conflict).";
    decided.classList.add("error");
  }
  // files/propose's review, as the model reads it (result.review: accepted, partial, for the turn)
  if (typeof message.result?.review === "string") {
    card.classList.add("reviewed");
    summary(card).append(el("span", "review-tag", message.result.review.startsWith("applied") ? "partial" : "reviewed"));
    card.after(el("div", "notice review-outcome", `Review: ${message.result.review}`));
  }
}

/** A user message is turn `turnId`: a "Restore checkpoint" action goes back to before it. */
function markTurn(node, turnId) {
  if (node.dataset.turnId) return;
  node.dataset.turnId = String(turnId);
  const actions = el("div", "user-actions");
  const button = el("button", "restore", "↶ Restore checkpoint");
  button.type = "button";
  button.title = "Undo this turn and every later one: files and conversation go back to before it";
  button.dataset.turnId = String(turnId);
  actions.append(button);
  node.after(actions);
}

log.addEventListener("click", (event) => {
  const button = event.target.closest?.("button.restore");
  if (button) vscode.postMessage({ type: "rewind", turnId: Number(button.dataset.turnId) });
});

function summary(card) {
  return card.querySelector("summary");
}

/** files/propose with review: the hunks in the tool call's card, each with Accept ticked. */
function reviewCard(m) {
  const card = tools.get(`${m.turnId}:${m.toolCallId}`);
  const node = el("div", "review");
  node.dataset.review = String(m.reviewId);
  node.append(el("div", "label", `Review ${m.newFile ? "the new file" : "the change to"} ${m.path}: ${m.hunks.length} hunk${m.hunks.length === 1 ? "" : "s"} (also in the diff editor)`));
  for (const hunk of m.hunks) {
    const row = el("div", "review-hunk");
    const label = el("label", "hunk-accept");
    const box = el("input");
    box.type = "checkbox";
    box.checked = true;
    box.dataset.hunk = String(hunk.id);
    label.append(box, document.createTextNode(` Accept hunk ${hunk.id}`));
    row.append(label, diffBlock(hunk.diff));
    node.append(row);
  }
  const buttons = el("div", "review-buttons");
  const button = (action, text, title) => {
    const b = el("button", `review-${action}`, text);
    b.type = "button";
    b.title = title;
    b.dataset.action = action;
    buttons.append(b);
  };
  button("apply", "Apply ticked hunks", "Accept the ticked hunks and reject the others");
  button("acceptAll", "Accept all", "Accept every hunk");
  button("rejectAll", "Reject all", "Reject every hunk");
  button("rejectWithReason", "Reject…", "Reject every hunk and tell the model why");
  button("acceptAllForTurn", "Accept all for this turn", "Accept this change and every later one in this turn without review");
  button("open", "Open diff", "Show the change in the diff editor again");
  node.append(buttons);
  if (card) {
    card.open = true;
    card.querySelector(".body").append(node);
  } else (turn ? turn.el : log).append(node);
  node.scrollIntoView({ block: "end" });
}

log.addEventListener("click", (event) => {
  const button = event.target.closest?.(".notice.ask button.ask-choice");
  if (!button || button.disabled) return;
  const question = button.closest(".notice.ask");
  for (const b of question.querySelectorAll("button")) b.disabled = true;
  vscode.postMessage({ type: "askAnswer", askId: Number(question.dataset.ask), answer: button.dataset.answer });
});

function reviewDone(m) {
  const node = log.querySelector(`.review[data-review="${m.reviewId}"]`);
  if (!node) return;
  node.classList.add("done");
  for (const input of node.querySelectorAll("input, button")) input.disabled = true;
  const accepted = m.accepted;
  const text =
    accepted === null ? "The review was withdrawn: nothing changed."
    : m.acceptAllForTurn ? "Accepted, and every later change in this turn."
    : accepted.length === 0 ? "Rejected."
    : accepted.length === m.total ? "Accepted."
    : `Accepted hunk${accepted.length === 1 ? "" : "s"} ${accepted.join(", ")} of ${m.total}.`;
  node.append(el("div", "notice review-decision", text));
}

log.addEventListener("click", (event) => {
  const button = event.target.closest?.(".review button[data-action]");
  if (!button) return;
  const node = button.closest(".review");
  const hunks = [...node.querySelectorAll("input[data-hunk]")].filter((b) => b.checked).map((b) => Number(b.dataset.hunk));
  vscode.postMessage({ type: "review", reviewId: Number(node.dataset.review), action: button.dataset.action, hunks });
});

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

/** A message's content: a string, or a list of parts (text and images, as with images). */
function contentText(content) {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .map((part) => (typeof part === "string" ? part : part?.type === "text" ? part.text ?? "" : part?.type === "image" ? "[image]" : JSON.stringify(part)))
      .join("\n");
  }
  return JSON.stringify(content);
}

const CHIP_ICONS = { file: "≡", folder: "▸", selection: "✂", diagnostics: "⚠", image: "▣", symbol: "#" };
function chipText(type, label) {
  return `${CHIP_ICONS[type] ?? "+"} ${label}`;
}

const chipRow = $("#chips");
function addChip(chip) {
  chip.attachment.label = chip.label;
  chips.push(chip);
  drawChips();
}
function drawChips() {
  chipRow.replaceChildren(
    ...chips.map((chip, i) => {
      const node = el("span", `chip ${chip.attachment.type}`);
      if (chip.attachment.type === "image") {
        const img = el("img");
        img.src = `data:${chip.attachment.mimeType};base64,${chip.attachment.data}`;
        img.alt = chip.label;
        node.append(img);
      }
      node.append(document.createTextNode(chipText(chip.attachment.type, chip.label)));
      const remove = el("button", "remove", "×");
      remove.type = "button";
      remove.title = "Remove this attachment";
      remove.addEventListener("click", () => {
        chips.splice(i, 1);
        drawChips();
      });
      node.append(remove);
      return node;
    }),
  );
}

const IMAGE_TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp"];
const IMAGE_CAP = 5 * 1024 * 1024;
/** A pasted or dropped image becomes an image attachment (base64). */
function attachImages(files) {
  for (const file of files) {
    if (!IMAGE_TYPES.includes(file.type)) {
      if (file.type.startsWith("image/")) add(el("div", "notice info", `Not attached: ${file.name || "the image"} is ${file.type}; images can be PNG, JPEG, GIF or WebP.`));
      continue;
    }
    if (file.size > IMAGE_CAP) {
      add(el("div", "notice info", `Not attached: ${file.name || "the image"} is over 5 MB.`));
      continue;
    }
    const reader = new FileReader();
    reader.onload = () => {
      const data = String(reader.result).replace(/^data:[^,]*,/, "");
      addChip({ attachment: { type: "image", mimeType: file.type, data }, label: file.name || `pasted ${file.type.slice(6)}` });
    };
    reader.readAsDataURL(file);
  }
}

const meterLine = $("#meter");
/** event/usage: the header's context meter, always in view (meter.js). */
function showMeter(m) {
  const shown = meterParts(m);
  meterLine.hidden = shown.length === 0;
  meterLine.classList.toggle("warn", shown.some((p) => p.kind === "warning"));
  meterLine.replaceChildren(
    ...shown.flatMap((p, i) => [...(i ? [el("span", "sep", " · ")] : []), el("span", `meter-${p.kind}`, p.text)]),
  );
  meterLine.title = meterTitle(m);
}

const modelButton = $("#model");
/** The model picker (issue 40): the header's button shows the model; a click opens the picker. */
function showModel(m) {
  if (!m.model && !m.provider) return;
  modelButton.hidden = false;
  modelButton.textContent = `${m.model ?? "?"} ▾`;
  modelButton.title = `${m.provider ?? "?"} · ${m.model ?? "?"}: click to pick another model or provider`;
}
modelButton.addEventListener("click", () => vscode.postMessage({ type: "pickModel" }));

const modeButton = $("#mode");
/** The session's mode (issue 20): a button in the header that opens the picker. */
function showMode(mode) {
  if (!mode?.current) return;
  const info = (mode.available ?? []).find((m) => m.id === mode.current);
  modeButton.hidden = false;
  modeButton.textContent = `Mode: ${info?.name ?? mode.current} ▾`;
  modeButton.title = `${info?.description ?? mode.current}: click to switch the mode`;
  modeButton.dataset.mode = mode.current;
}
modeButton.addEventListener("click", () => vscode.postMessage({ type: "pickMode" }));

const PLAN_MARKS = { pending: "○", in_progress: "◐", completed: "●" };
/** event/plan: the whole checklist each time, drawn in place (one plan per session). */
function showPlan(entries, turnId) {
  let node = log.querySelector(".plan");
  if (!node) {
    node = el("div", "plan");
    node.append(el("div", "label", "Plan"), el("ul", "entries"));
    (turnId !== undefined && turnId !== null ? currentTurn(turnId).el : log).append(node);
  }
  node.querySelector("ul").replaceChildren(
    ...entries.map((entry) => {
      const li = el("li", `entry ${entry.status}`);
      li.append(el("span", "mark", PLAN_MARKS[entry.status] ?? "○"), el("span", "content", entry.content));
      li.title = entry.status.replace("_", " ");
      return li;
    }),
  );
  const done = entries.filter((e) => e.status === "completed").length;
  node.querySelector(".label").textContent = `Plan: ${done} of ${entries.length} done`;
  node.scrollIntoView({ block: "end" });
}

const mcpLine = $("#mcp");
const mcpSeen = new Map(); // server name -> its one line in the log; "problem:TEXT" -> true
const MCP_STATES = { starting: "starting…", ready: "ready", retrying: "retrying", "needs-auth": "needs your approval", failed: "failed", stopped: "stopped" };
/** session/new's `mcp` and every `event/mcp`: one status line, and a notice when a server is in trouble. */
function showMcp(mcp) {
  const servers = mcp?.servers ?? [];
  mcpLine.hidden = servers.length === 0 && !(mcp?.problems?.length);
  mcpLine.replaceChildren(
    el("span", "label", "MCP: "),
    ...servers.map((server) => {
      const tools = server.state === "ready" ? ` (${server.tools?.length ?? 0} tool${server.tools?.length === 1 ? "" : "s"})` : "";
      const node = el("span", `mcp-server ${server.state}`, `${server.name} ${MCP_STATES[server.state] ?? server.state}${tools}`);
      node.title = [server.transport, server.source, server.error].filter(Boolean).join(" · ");
      return node;
    }),
  );
  // A server in trouble is one line in the chat, updated in place (state, attempts, last
  // error): never a line per retry, and never inside a streaming reply.
  for (const server of servers) {
    const line = mcpSeen.get(server.name);
    const trouble = ["failed", "retrying", "needs-auth"].includes(server.state);
    if (!line && !trouble) continue;
    const node = line ?? el("div", "notice mcp-notice");
    if (!line) {
      mcpSeen.set(server.name, node);
      log.append(node);
    }
    const attempts = Number(server.attempts) > 1 ? ` (${Number(server.attempts)} attempts)` : "";
    const why = server.state === "needs-auth" ? "waits for your approval in the browser" : `${MCP_STATES[server.state] ?? server.state}${attempts}${server.error ? `: ${server.error}` : ""}`;
    node.className = `notice ${server.state === "ready" || server.state === "needs-auth" ? "info" : "error"} mcp-notice`;
    node.textContent = `MCP server ${server.name} ${why}`;
  }
  for (const problem of mcp?.problems ?? []) {
    if (mcpSeen.has(`problem:${problem}`)) continue;
    mcpSeen.set(`problem:${problem}`, true);
    add(el("div", "notice error mcp-notice", `MCP: ${problem}`));
  }
}

const STOP_REASONS = {
  cancelled: "Stopped.",
  error: "The turn failed.",
  max_turn_requests: "Stopped: the tool-round limit was reached.",
};

const handlers = {
  scrollEnd() {
    scrollEnd();
    requestAnimationFrame(scrollEnd);
  },
  clear() {
    log.replaceChildren();
    pinned = true;
    showMeter(null);
    mcpLine.hidden = true;
    mcpSeen.clear();
    turn = null;
    tools = new Map();
  },
  session(m) {
    status.textContent = `${m.provider} · ${m.model} · ${m.cwd}${m.trusted === false ? " · untrusted: no project plugins" : ""}`;
    status.title = `session ${m.sessionId}`;
    showModel(m);
    showMode(m.mode);
  },
  mode(m) {
    showMode(m.mode);
  },
  plan(m) {
    showPlan(m.entries ?? m.plan?.entries ?? [], m.turnId);
  },
  user(m) {
    turn = null;
    errorShown = false;
    lastUser = add(el("div", "turn user", m.text));
    if (m.attachments?.length) {
      const row = el("div", "chips sent");
      for (const a of m.attachments) row.append(el("span", `chip ${a.type}`, chipText(a.type, a.label)));
      lastUser.append(row);
    }
  },
  steerQueued(m) {
    // session/steer answered {queued}: shown in the running turn, marked taken by event/steer.
    const t = currentTurn(turn?.id);
    t.el.append(el("div", "steer queued", m.text));
    t.last = null;
  },
  steer(m) {
    const t = currentTurn(m.turnId);
    const queued = [...t.el.querySelectorAll(":scope > .steer.queued")].find((node) => node.textContent === m.text);
    if (queued) queued.classList.remove("queued");
    else t.el.append(el("div", "steer", m.text));
    t.last = null;
  },
  mcp(m) {
    showMcp(m.mcp);
  },
  refused(m) {
    // invalid_attachment: nothing was sent or kept; the prompt and its chips come back.
    if (lastUser) lastUser.classList.add("refused");
    lastUser = null;
    turn = null;
    add(el("div", "notice error refused", `Not sent: ${m.text}`));
  },
  chip(m) {
    addChip({ attachment: m.attachment, label: m.label });
  },
  attachError(m) {
    add(el("div", "notice info", m.text));
  },
  turns(m) {
    // session/checkpoints' turns, oldest first: each user message that is a turn's prompt
    // gets its turnId (and so its Restore action), in order.
    const users = [...log.querySelectorAll(".turn.user:not(.command)")];
    let at = 0;
    for (const t of m.turns) {
      const prompt = (t.prompt ?? "").trim();
      const found = users.findIndex((u, i) => i >= at && u.textContent.trim().split("\n")[0].startsWith(prompt.replace(/…$/, "")));
      if (found < 0) continue;
      markTurn(users[found], t.turnId);
      at = found + 1;
    }
  },
  thinking: (m) => delta("thinking", m),
  saying: (m) => delta("saying", m),
  doing: toolCard,
  result: toolResult,
  review: reviewCard,
  reviewDone,
  say(m) {
    const host = childHost(m);
    if (host) {
      host.el.append(el("div", `notice ${m.kind ?? "plain"}`, m.text));
      return;
    }
    if (m.kind === "error") errorShown = true;
    notice(m.kind ?? "plain", m.text, m.kind === "markdown");
  },
  usage(m) {
    meter = m; // event/usage: the turn's summary shows the context meter and the cost
    showMeter(m); // and the header, until the next one
  },
  turnEnd(m) {
    if (lastUser && m.turnId !== undefined) markTurn(lastUser, m.turnId);
    lastUser = null;
    const t = currentTurn(m.turnId);
    if (!t.el.querySelector(".markdown") && m.reply && m.stopReason !== "cancelled" && m.stopReason !== "error") {
      delta("saying", { turnId: m.turnId, text: m.reply });
    }
    settleTools(m.stopReason === "cancelled" ? "cancelled" : "no result");
    // A steer the turn never took (it ended first): not sent, not kept (the daemon says so too).
    for (const node of t.el.querySelectorAll(":scope > .steer.queued")) node.classList.replace("queued", "dropped");
    const reason = STOP_REASONS[m.stopReason];
    // A provider failure was said already (event/say, kind error): say it only once.
    const text = m.stopReason === "error" && !errorShown ? m.reply : reason;
    if (reason) t.el.append(el("div", `stop-reason ${m.stopReason}`, text));
    if (m.usage) {
      const u = m.usage;
      const cached = u.cache_read_tokens ? ` (${u.cache_read_tokens} cached)` : "";
      t.el.append(el("div", "usage", `${u.input_tokens ?? "?"} in${cached} · ${u.output_tokens ?? "?"} out${meterText(meter)}`));
    }
    meter = null;
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
    if (Array.isArray(m.choices) && m.choices.length) {
      // elelem.askInChat: the answers are buttons here; nothing takes the keyboard.
      node.classList.add("waiting");
      node.dataset.ask = String(m.askId);
      const buttons = el("div", "ask-buttons");
      for (const choice of m.choices) {
        const b = el("button", `ask-choice ask-${String(choice.answer).replace(/[^a-z-]/gi, "")}`, choice.label);
        b.type = "button";
        b.title = choice.description;
        b.dataset.answer = choice.answer;
        buttons.append(b);
      }
      node.append(buttons);
    }
    asking = card ? card.querySelector(".body") : null;
    if (card) card.open = true;
    (asking ?? (turn ? turn.el : log)).append(node);
    node.scrollIntoView({ block: "end" });
  },
  answer(m) {
    const question = m.askId !== undefined ? log.querySelector(`.notice.ask[data-ask="${m.askId}"]`) : null;
    if (question) {
      question.classList.remove("waiting");
      for (const b of question.querySelectorAll("button")) b.disabled = true;
    }
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
    let marker = null; // the last compaction's notice, while its summary may follow
    for (const message of m.messages) {
      if (message.type === "compacted") {
        // the turns above are the user's still; the model reads a summary of them from here
        turn = null;
        marker = add(el("div", "notice compacted", "Context compacted here: the model reads a summary of what came before."));
        continue;
      }
      if (marker && message.role === "user") {
        // the summary after the marker (protocol.md: a user message, `Context: …`) is what the
        // model reads, not a prompt the user typed: folded into the marker, not a user bubble
        const summary = el("details", "summary");
        summary.append(el("summary", "", "The summary the model reads"), el("div", "body", contentText(message.content)));
        marker.append(summary);
        marker = null;
        continue;
      }
      marker = null;
      if (message.type === "tool") {
        const call = { ...message, turnId: replying().id };
        toolCard(call);
        toolResult(call);
        continue;
      }
      const text = contentText(message.content);
      if (message.role === "user") handlers.user({ text });
      else if (message.role === "assistant") {
        if (text) delta("saying", { turnId: replying().id, text });
        turn = null;
      } else if (message.role === "tool") add(el("pre", "history-tool", text));
    }
    turn = null;
    scrollEnd();
    requestAnimationFrame(scrollEnd); // after the replies' Markdown is drawn
  },
  error(m) {
    turn = null;
    add(el("div", "notice error", m.text));
  },
  unsent(m) {
    // The prompt never reached the daemon: give it back, so the user can send it again.
    if (input.value.trim()) return;
    if (chips.length === 0) for (const a of m.attachments ?? []) addChip({ attachment: a, label: a.label ?? a.type });
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
    // While a turn runs, what is sent is a steer: the turn takes it into its next request.
    sendButton.title = busy ? "Steer: the running turn reads this with its next request" : "Send";
    input.placeholder = busy ? "Steer the running turn…" : placeholder;
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
  if (!text) return;
  vscode.postMessage({ type: "send", text, ...(chips.length ? { attachments: chips.map((c) => c.attachment) } : {}) });
  chips = [];
  drawChips();
  input.value = "";
  hideCompletions();
  saveDraft();
}

input.addEventListener("input", () => {
  saveDraft();
  const text = input.value;
  if ((text.startsWith("/") && !text.includes("\n")) || /(^|\s)@\S*$/.test(text)) vscode.postMessage({ type: "complete", text });
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
      // An @ mention: Enter picks the file and the prompt goes on.
      if (completesInput() && /(^|\s)@\S*$/.test(input.value)) {
        accept(completions.index);
        input.value += " ";
        saveDraft();
        event.preventDefault();
        return;
      }
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
for (const button of document.querySelectorAll("#attach button[data-attach]")) {
  button.addEventListener("click", () => vscode.postMessage({ type: "attach", what: button.dataset.attach }));
}
$("#mention").addEventListener("click", () => {
  const text = input.value;
  input.value = text + (text && !/\s$/.test(text) ? " @" : "@");
  input.focus();
  input.dispatchEvent(new Event("input"));
});
input.addEventListener("paste", (event) => {
  const files = [...(event.clipboardData?.files ?? [])].filter((f) => f.type.startsWith("image/"));
  if (files.length === 0) return;
  event.preventDefault();
  attachImages(files);
});
form.addEventListener("dragover", (event) => event.preventDefault());
form.addEventListener("drop", (event) => {
  const files = [...(event.dataTransfer?.files ?? [])];
  if (files.length === 0) return;
  event.preventDefault();
  attachImages(files);
});
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
