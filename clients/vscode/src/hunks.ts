// The hunks of a `files/propose` (protocol.md, "files/propose"): applying the accepted ones
// to `oldText`, and where each lands in the document, written from protocol.md's recipe.

export interface Hunk {
  id: number;
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
  diff: string;
}

/** protocol.md: a line is text up to and including a "\n" (so "\r\n" is one); the last may lack it. */
export function splitLines(text: string): string[] {
  const out: string[] = [];
  let start = 0;
  while (start < text.length) {
    const nl = text.indexOf("\n", start);
    const end = nl < 0 ? text.length : nl + 1;
    out.push(text.slice(start, end));
    start = end;
  }
  return out;
}

/** One replacement in `oldText`: character offsets [start, end) and the new text there. */
export interface Replacement {
  start: number;
  end: number;
  text: string;
}

/**
 * The replacements the accepted hunks make in `oldText`, in file order: for each, `oldText`'s
 * lines oldStart..oldStart+oldLines-1 (0 lines: after line oldStart) become `newText`'s lines
 * newStart..newStart+newLines-1. Throws on a hunk outside either text (a hostile proposal).
 */
export function replacements(oldText: string, newText: string, hunks: readonly Hunk[], accepted: Iterable<number>): Replacement[] {
  const ids = new Set(accepted);
  const a = splitLines(oldText);
  const b = splitLines(newText);
  const offsets = [0];
  for (const line of a) offsets.push(offsets[offsets.length - 1] + line.length);
  const out: Replacement[] = [];
  for (const hunk of [...hunks].sort((x, y) => x.oldStart - y.oldStart)) {
    if (!ids.has(hunk.id)) continue;
    const at = hunk.oldLines === 0 ? hunk.oldStart : hunk.oldStart - 1;
    const first = hunk.newStart - 1;
    const inOld = Number.isInteger(at) && at >= 0 && at + hunk.oldLines <= a.length;
    const inNew = hunk.newLines === 0 || (Number.isInteger(first) && first >= 0 && first + hunk.newLines <= b.length);
    if (!inOld || !inNew) throw new Error(`hunk ${hunk.id} lies outside the text`);
    const text = hunk.newLines ? b.slice(first, first + hunk.newLines).join("") : "";
    out.push({ start: offsets[at], end: offsets[at + hunk.oldLines], text });
  }
  return out;
}

/** `oldText` with the accepted hunks applied. */
export function applyHunks(oldText: string, newText: string, hunks: readonly Hunk[], accepted: Iterable<number>): string {
  let text = oldText;
  for (const r of replacements(oldText, newText, hunks, accepted).reverse()) {
    text = text.slice(0, r.start) + r.text + text.slice(r.end);
  }
  return text;
}
