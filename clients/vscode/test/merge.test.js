// The three-way merge of lines (src/merge.ts) that keeps the user's unsaved edits apart
// from the agent's change: on save (files.ts) and on Undo Last Turn (rewind.ts).
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const { merge3, linesNamed } = require("../dist/lib/merge.js");

const L = (...lines) => lines.map((l) => `${l}\n`).join("");

test("changes on different lines both land", () => {
  const base = L("a", "b", "c", "d", "e", "f");
  const ours = L("mine", "a", "b", "c", "d", "e", "f");
  const theirs = L("a", "b", "c", "d", "E", "f");
  assert.deepEqual(merge3(base, ours, theirs), { text: L("mine", "a", "b", "c", "d", "E", "f") });
});

test("undo: the agent's change taken out of a buffer that also holds the user's edit", () => {
  const before = L("one", "two", "three", "four", "five");
  const after = L("one", "two", "three", "FOUR", "five");
  const buffer = L("# mine", "one", "two", "three", "FOUR", "five");
  assert.deepEqual(merge3(after, buffer, before), { text: L("# mine", "one", "two", "three", "four", "five") });
});

test("the same change on both sides is taken once", () => {
  const base = L("a", "b", "c");
  assert.deepEqual(merge3(base, L("a", "B", "c"), L("a", "B", "c")), { text: L("a", "B", "c") });
  assert.deepEqual(merge3(base, L("x", "a", "B", "c"), L("a", "B", "c")), { text: L("x", "a", "B", "c") });
});

test("both sides changing the same lines is a conflict, with ours' lines named", () => {
  const merged = merge3(L("a", "b", "c", "d"), L("a", "b", "MINE", "d"), L("a", "b", "THEIRS", "d"));
  assert.deepEqual(merged, { conflict: [{ first: 3, last: 3 }] });
  assert.equal(linesNamed(merged.conflict), "line 3");
  assert.equal(linesNamed([{ first: 2, last: 4 }, { first: 9, last: 9 }]), "lines 2–4, 9");
});

test("a last line without a newline, CRLF lines and an empty base", () => {
  assert.deepEqual(merge3("a\r\nb\r\nc", "x\r\na\r\nb\r\nc", "a\r\nb\r\nC"), { text: "x\r\na\r\nb\r\nC" });
  assert.deepEqual(merge3("", "mine\n", ""), { text: "mine\n" });
  assert.deepEqual(merge3("", "", "theirs\n"), { text: "theirs\n" });
});

test("hostile sizes are bounded: a huge differing middle is a conflict, not a hang", () => {
  const big = (tag) => Array.from({ length: 3000 }, (_, i) => `${tag}${i}\n`).join("");
  const merged = merge3(big("a"), big("b"), big("c"));
  assert.ok("conflict" in merged);
});
