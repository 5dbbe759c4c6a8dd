// A three-way merge of texts by lines, for the two places where the agent's change and the
// user's own unsaved edits meet in one document: putting only the agent's change on the disk
// (files.ts) and taking only the undone turn's changes out of a buffer (rewind.ts).
// Bounded: a changed middle of more than MAX_CELLS line pairs is not diffed (a conflict).
import { splitLines } from "./hunks";

/** Lines of `base` [start, end) replaced by `lines`. */
interface Region {
  start: number;
  end: number;
  lines: string[];
}

/** Past this many line pairs in the part that differs, the merge gives up (a conflict). */
const MAX_CELLS = 4_000_000;

/** The regions where `other` differs from `base`, in order (an LCS of lines); undefined: too large. */
export function regions(base: string[], other: string[]): Region[] | undefined {
  let head = 0;
  while (head < base.length && head < other.length && base[head] === other[head]) head++;
  let tail = 0;
  while (tail < base.length - head && tail < other.length - head && base[base.length - 1 - tail] === other[other.length - 1 - tail]) tail++;
  const a = base.slice(head, base.length - tail);
  const b = other.slice(head, other.length - tail);
  if (a.length === 0 && b.length === 0) return [];
  if (a.length === 0 || b.length === 0) return [{ start: head, end: head + a.length, lines: b }];
  if ((a.length + 1) * (b.length + 1) > MAX_CELLS) return undefined;
  // lcs[i][j]: the longest common subsequence of a[i..] and b[j..]
  const width = b.length + 1;
  const lcs = new Uint32Array((a.length + 1) * width);
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lcs[i * width + j] = a[i] === b[j] ? lcs[(i + 1) * width + j + 1] + 1 : Math.max(lcs[(i + 1) * width + j], lcs[i * width + j + 1]);
    }
  }
  const out: Region[] = [];
  let i = 0;
  let j = 0;
  let open: Region | undefined;
  const close = () => {
    if (open) out.push(open);
    open = undefined;
  };
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      close();
      i++;
      j++;
    } else if (j < b.length && (i === a.length || lcs[i * width + j + 1] >= lcs[(i + 1) * width + j])) {
      open ??= { start: head + i, end: head + i, lines: [] };
      open.lines.push(b[j++]);
    } else {
      open ??= { start: head + i, end: head + i, lines: [] };
      open.end = head + ++i;
    }
  }
  close();
  return out;
}

export type Merged = { text: string } | { conflict: { first: number; last: number }[] };

/**
 * `base` changed both ways: `ours` and `theirs` merged. Changes that touch the same lines
 * (or meet) are a conflict unless both sides made the same one. The conflict's
 * lines are 1-based lines of `ours`.
 */
export function merge3(base: string, ours: string, theirs: string): Merged {
  if (ours === base) return { text: theirs };
  if (theirs === base || theirs === ours) return { text: ours };
  const b = splitLines(base);
  const o = splitLines(ours);
  const t = splitLines(theirs);
  const ro = regions(b, o);
  const rt = regions(b, t);
  if (!ro || !rt) return { conflict: [{ first: 1, last: Math.max(o.length, 1) }] };
  const all = [...ro.map((r) => ({ ...r, side: 0 })), ...rt.map((r) => ({ ...r, side: 1 }))].sort((x, y) => x.start - y.start || x.end - y.end);
  const out: string[] = [];
  const conflict: { first: number; last: number }[] = [];
  let at = 0; // next line of base to copy
  let shift = 0; // ours' line number minus base's, before `at`
  for (let k = 0; k < all.length; ) {
    // a group: regions that overlap or touch one another
    const start = all[k].start;
    let end = all[k].end;
    const group = [all[k++]];
    while (k < all.length && all[k].start <= end) {
      end = Math.max(end, all[k].end);
      group.push(all[k++]);
    }
    out.push(...b.slice(at, start));
    const side = (s: number) => {
      const mine = group.filter((g) => g.side === s);
      const lines: string[] = [];
      let i = start;
      for (const r of mine) {
        lines.push(...b.slice(i, r.start), ...r.lines);
        i = r.end;
      }
      lines.push(...b.slice(i, end));
      return lines;
    };
    const oursLines = side(0);
    const sides = new Set(group.map((g) => g.side));
    if (sides.size === 1) out.push(...(sides.has(0) ? oursLines : side(1)));
    else {
      const theirsLines = side(1);
      if (oursLines.join("") === theirsLines.join("")) out.push(...oursLines);
      else {
        const first = start + shift + 1;
        conflict.push({ first, last: Math.max(first, first + oursLines.length - 1) });
        out.push(...oursLines);
      }
    }
    shift += oursLines.length - (end - start);
    at = end;
  }
  out.push(...b.slice(at));
  return conflict.length ? { conflict } : { text: out.join("") };
}

/** "line 4", "lines 4–6, 12" */
export function linesNamed(spans: { first: number; last: number }[]): string {
  const parts = spans.map((s) => (s.first === s.last ? `${s.first}` : `${s.first}–${s.last}`));
  return `line${spans.length === 1 && spans[0].first === spans[0].last ? "" : "s"} ${parts.join(", ")}`;
}
