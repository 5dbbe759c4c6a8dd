// The context meter (issue 40), always in view in the chat's header: how full the model's
// window is, how much of the prompt the provider's cache served, the session's cost, and a
// warning shortly before the daemon compacts on its own (`compactAt` of `event/usage`,
// ELELEM_COMPACT_AT). The wording is the Neovim client's (clients/nvim/lua/elelem/meter.lua):
// "ctx 800/1.0k 80% · 88% cached · $0.0108 · ⚠ auto-compacts at 85%".

/** The warning shows this share of the window before compactAt. */
export const WARN_BEFORE = 0.1;

/** 12345 as `12.3k`. */
export function short(n) {
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)}M`;
  if (n >= 1e3) return `${(n / 1e3).toFixed(1)}k`;
  return String(Math.floor(n));
}

const number = (v) => (typeof v === "number" && Number.isFinite(v) ? v : undefined);

function fill(m) {
  if (!m || typeof m !== "object") return undefined;
  const used = number(m.used);
  const size = number(m.size);
  if (used === undefined || size === undefined || size <= 0 || used < 0) return undefined;
  return { used, size, share: Math.min(used / size, 9.99) };
}

/** "auto-compacts at 85%" once the context is past compactAt - 10 %; else undefined. */
export function warning(m) {
  const f = fill(m);
  const at = number(m?.compactAt);
  if (!f || at === undefined || at <= 0 || at > 1) return undefined;
  return f.share >= at - WARN_BEFORE ? `auto-compacts at ${Math.round(at * 100)}%` : undefined;
}

/** The meter's parts, in order: [{text, kind}] with kind ctx, cached, cost or warning. */
export function parts(m) {
  if (!m || typeof m !== "object") return [];
  const out = [];
  const f = fill(m);
  if (f) out.push({ kind: "ctx", text: `ctx ${short(f.used)}/${short(f.size)} ${Math.floor(f.share * 100)}%` });
  const input = number(m.inputTokens);
  const read = number(m.cacheReadTokens);
  if (input && read && input > 0 && read > 0) out.push({ kind: "cached", text: `${Math.floor(Math.min(read / input, 1) * 100)}% cached` });
  const cost = number(m.session?.cost);
  if (cost !== undefined) out.push({ kind: "cost", text: `$${cost.toFixed(4)}` });
  const warn = warning(m);
  if (warn) out.push({ kind: "warning", text: `⚠ ${warn}` });
  return out;
}

/** The whole line, as Neovim's winbar shows it. */
export function text(m) {
  return parts(m).map((p) => p.text).join(" · ");
}

/** The tooltip: the numbers in full. */
export function title(m) {
  if (!m || typeof m !== "object") return "";
  const lines = [];
  const f = fill(m);
  if (f) lines.push(`Context: ${f.used} of ${f.size} tokens (${Math.floor(f.share * 100)}%) in the last request`);
  if (number(m.inputTokens) !== undefined) lines.push(`Last turn: ${m.inputTokens} in (${number(m.cacheReadTokens) ?? 0} from the cache) · ${number(m.outputTokens) ?? "?"} out`);
  if (number(m.session?.cost) !== undefined) lines.push(`Session cost: $${m.session.cost.toFixed(4)} (estimated)`);
  else lines.push("Session cost: unknown (no price for this model)");
  const at = number(m.compactAt);
  if (at !== undefined && at > 0 && at <= 1) lines.push(`The daemon compacts the conversation before a turn once the context is past ${Math.round(at * 100)}% (ELELEM_COMPACT_AT)`);
  return lines.join("\n");
}
