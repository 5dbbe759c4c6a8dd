// Issue 16 through the real daemon (stub provider): files/read of open (unsaved) documents,
// files/propose reviewed in the chat's card (accept, partial, reject, for the turn, conflict,
// withdrawn), one undo step, files not open, and the hunk recipe against hostile proposals.
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("fs");
const path = require("path");
const { vscode, fake, activate, deactivate, waitFor, send } = require("./helpers");
const { applyHunks } = require("../dist/lib/hunks.js");

function withChat(name, body, settings, options) {
  test(name, async () => {
    const env = await activate(settings, options);
    try {
      await body(env);
    } catch (error) {
      console.error(`log of "${name}":\n${fake.logLines.join("\n")}`);
      throw error;
    } finally {
      await deactivate(env.context);
    }
  });
}

const LINES = (edit = {}) => Array.from({ length: 20 }, (_, i) => `line_${i + 1} = ${edit[i + 1] ?? i + 1}\n`).join("");

/** A file on disk (LINES()) that the editor has open, with `text` in its buffer. */
function openFile(name, text = LINES()) {
  const file = path.join(fake.workspaceFolder, name);
  fs.writeFileSync(file, LINES());
  return { file, document: fake.open(file, text) };
}

/** Send `text` from the webview; `decide(review)` answers each review card. */
async function turnWithReviews(view, text, decide) {
  const from = view.posted.length;
  let seen = from;
  const reviews = [];
  let failure;
  const listener = (m) => {
    if (m.type !== "review") return;
    reviews.push(m);
    Promise.resolve()
      .then(() => decide(m, reviews.length))
      .then((action) => action && view.receive({ type: "review", reviewId: m.reviewId, ...action }))
      .catch((error) => {
        failure = error; // a failed check stops the turn instead of leaving the review open
        view.receive({ type: "stop" });
      });
  };
  view.bus.on("message", listener);
  try {
    const { last, posted } = await send(view, text);
    if (failure) throw failure;
    seen = posted;
    return { last, posted: seen, reviews, results: posted.filter((m) => m.type === "result") };
  } finally {
    view.bus.off("message", listener);
  }
}

withChat("files/read serves an open document's unsaved text; a closed file is read from disk", async ({ view }) => {
  openFile("open.py", "unsaved = 1\n");
  fs.writeFileSync(path.join(fake.workspaceFolder, "closed.py"), "on_disk = 1\n");
  let { results } = await turnWithReviews(view, '!tool read {"path":"open.py"}', () => undefined);
  assert.match(JSON.stringify(results[0].result), /unsaved = 1/);
  ({ results } = await turnWithReviews(view, '!tool read {"path":"closed.py"}', () => undefined));
  assert.match(JSON.stringify(results[0].result), /on_disk = 1/);
});

withChat("a partial acceptance lands in the document as one edit, and the model reads which hunk was rejected", async ({ view }) => {
  const { file, document } = openFile("a.py");
  const content = LINES({ 2: 20, 18: 180 });
  const { results, reviews } = await turnWithReviews(view, `!tool write ${JSON.stringify({ path: "a.py", content })}`, () => ({ action: "apply", hunks: [1] }));
  assert.equal(reviews.length, 1);
  assert.equal(reviews[0].path, "a.py");
  assert.deepEqual(reviews[0].hunks.map((h) => h.id), [1, 2]);
  assert.ok(fake.executed.some(([id, , right, title]) => id === "vscode.diff" && right.scheme === "elelem-review" && /a\.py/.test(title)));
  const result = results.at(-1);
  assert.equal(result.ok, true);
  assert.match(result.result.review, /^applied 1 of 2 hunks; hunk 2 \(lines \d+.\d+\) was rejected by the user/);
  assert.equal(document.getText(), LINES({ 2: 20 }));
  assert.equal(fake.applied.length, 1, "one WorkspaceEdit: one undo step");
  // issue 31: the document had no unsaved edit of the user's: saved, so the agent's next command sees it
  assert.equal(document.saved, 1);
  assert.equal(fs.readFileSync(file, "utf8"), LINES({ 2: 20 }));
  document.undo();
  assert.equal(document.getText(), LINES());
  const done = view.posted.find((m) => m.type === "reviewDone");
  assert.deepEqual([done.accepted, done.total], [[1], 2]);
});

withChat("the diff's CodeLens: Accept hunk 1, Reject hunk 2; the review ends when every hunk has a decision", async ({ view }) => {
  const { document } = openFile("lens.py");
  const content = LINES({ 2: 20, 18: 180 });
  const { results } = await turnWithReviews(view, `!tool write ${JSON.stringify({ path: "lens.py", content })}`, async (m) => {
    const right = vscode.Uri.from({ scheme: "elelem-review", path: path.join(fake.workspaceFolder, "lens.py"), query: `proposal=${m.reviewId}` });
    const lenses = fake.codeLenses.provideCodeLenses({ uri: right });
    const titles = lenses.map((l) => l.command.title);
    assert.deepEqual(titles.slice(0, 3), ["$(check-all) Accept all", "$(close-all) Reject all", "Accept all for this turn"]);
    assert.deepEqual(titles.slice(3), ["$(check) Accept hunk 1", "$(close) Reject hunk 1", "$(check) Accept hunk 2", "$(close) Reject hunk 2"]);
    assert.deepEqual([lenses[3].range.start.line, lenses[5].range.start.line], [1, 17], "each hunk's lenses are on its first changed line");
    const accept1 = lenses.find((l) => l.command.title.endsWith("Accept hunk 1")).command;
    await vscode.commands.executeCommand(accept1.command, ...accept1.arguments);
    assert.ok(fake.codeLenses.provideCodeLenses({ uri: right }).some((l) => l.command.title === "Hunk 1: accepted"));
    const reject2 = lenses.find((l) => l.command.title.endsWith("Reject hunk 2")).command;
    await vscode.commands.executeCommand(reject2.command, ...reject2.arguments);
    return undefined;
  });
  assert.match(results.at(-1).result.review, /^applied 1 of 2 hunks; hunk 2/);
  assert.equal(document.getText(), LINES({ 2: 20 }));
});

withChat("Choose Hunks to Accept…: the ticked hunks are accepted", async ({ view }) => {
  const { document } = openFile("pick.py");
  const content = LINES({ 2: 20, 18: 180 });
  let items;
  fake.answers.push((kind, offered, options) => {
    items = { offered, options };
    return offered.filter((i) => i.hunk === 2);
  });
  const { results } = await turnWithReviews(view, `!tool write ${JSON.stringify({ path: "pick.py", content })}`, async () => {
    await vscode.commands.executeCommand("elelem.review.chooseHunks");
    return undefined;
  });
  assert.equal(items.options.canPickMany, true);
  assert.deepEqual(items.offered.map((i) => [i.label, i.picked]), [["Hunk 1", true], ["Hunk 2", true]]);
  assert.match(items.offered[1].detail, /-line_18 = 18 {2}\+line_18 = 180/);
  assert.match(results.at(-1).result.review, /^applied 1 of 2 hunks; hunk 1/);
  assert.equal(document.getText(), LINES({ 18: 180 }));
});

withChat("accept all saves the document when elelem.saveAppliedEdits is on", async ({ view }) => {
  const { document } = openFile("b.py");
  const { results } = await turnWithReviews(view, '!tool edit {"path":"b.py","old":"line_3 = 3\\n","new":"line_3 = 30\\n"}', () => ({ action: "acceptAll" }));
  assert.equal(results.at(-1).result.review, "accepted by the user");
  assert.equal(document.getText(), LINES({ 3: 30 }));
  assert.equal(document.saved, 1);
}, { "elelem.saveAppliedEdits": true });

withChat("a document with the user's own unsaved edits is not saved for them: the chat and the model say so", async ({ view }) => {
  const { file, document } = openFile("d.py");
  document.type("# mine\n" + LINES());
  const { results, posted } = await turnWithReviews(view, '!tool edit {"path":"d.py","old":"line_9 = 9\\n","new":"line_9 = 90\\n"}', () => ({ action: "acceptAll" }));
  const result = results.at(-1);
  assert.equal(result.result.review, "accepted by the user");
  assert.match(result.result.disk, /^not saved: the change is in the user's editor only/);
  assert.equal(document.getText(), "# mine\n" + LINES({ 9: 90 }));
  assert.equal(document.saved, 0);
  assert.equal(fs.readFileSync(file, "utf8"), LINES(), "the user's unsaved line was saved for them");
  assert.ok(posted.some((m) => m.type === "say" && /d\.py: the agent's change is in the editor but not saved \(it also holds your own unsaved edits\)/.test(m.text)));
});

withChat("reject all changes nothing and the model reads the rejection", async ({ view }) => {
  const { document } = openFile("c.py");
  const { results } = await turnWithReviews(view, '!tool edit {"path":"c.py","old":"line_3 = 3\\n","new":"line_3 = 30\\n"}', () => ({ action: "rejectAll" }));
  assert.equal(results.at(-1).ok, false);
  assert.equal(results.at(-1).result.error, "the user rejected the change");
  assert.equal(document.getText(), LINES());
  assert.equal(fake.applied.length, 0);
});

withChat("Reject… asks why, and the model reads the reason", async ({ view }) => {
  const { document } = openFile("r.py");
  fake.answers.push(() => "use a constant instead");
  const { results } = await turnWithReviews(view, '!tool edit {"path":"r.py","old":"line_3 = 3\\n","new":"line_3 = 30\\n"}', () => ({ action: "rejectWithReason" }));
  assert.equal(results.at(-1).result.error, "the user rejected the change: use a constant instead");
  assert.equal(document.getText(), LINES());
});

withChat("the user typing into the document during the review makes it a conflict, untouched", async ({ view }) => {
  const { document } = openFile("d.py");
  const { results } = await turnWithReviews(view, '!tool edit {"path":"d.py","old":"line_3 = 3\\n","new":"line_3 = 30\\n"}', () => {
    document.type("typed meanwhile\n" + LINES());
    return { action: "acceptAll" };
  });
  assert.equal(results.at(-1).result.error, "conflict: the file changed since you read it; read it again");
  assert.equal(document.getText(), "typed meanwhile\n" + LINES());
  assert.equal(fake.applied.length, 0);
});

withChat("accept all for this turn: the turn's later changes apply unreviewed", async ({ view }) => {
  const { document } = openFile("e.py");
  const calls = [["edit", { path: "e.py", old: "line_3 = 3\n", new: "line_3 = 30\n" }], ["edit", { path: "e.py", old: "line_9 = 9\n", new: "line_9 = 90\n" }]];
  const { results, reviews } = await turnWithReviews(view, `!tools ${JSON.stringify(calls)}`, () => ({ action: "acceptAllForTurn" }));
  assert.equal(reviews.length, 1);
  assert.equal(results[0].result.review, "accepted by the user");
  assert.equal(results[1].result.review, "accepted: the user accepts every change in this turn");
  assert.equal(document.getText(), LINES({ 3: 30, 9: 90 }));
  assert.equal(fake.applied.length, 2);
});

withChat("a file the editor has not open is reviewed, then written by the daemon", async ({ view }) => {
  const file = path.join(fake.workspaceFolder, "closed.py");
  fs.writeFileSync(file, LINES());
  const { results, reviews } = await turnWithReviews(view, '!tool edit {"path":"closed.py","old":"line_3 = 3\\n","new":"line_3 = 30\\n"}', () => ({ action: "acceptAll" }));
  assert.equal(reviews.length, 1);
  assert.equal(results.at(-1).ok, true);
  assert.equal(fs.readFileSync(file, "utf8"), LINES({ 3: 30 }));
  const [, left] = fake.executed.find(([id]) => id === "vscode.diff");
  assert.equal(left.scheme, "elelem-review", "the old text as a virtual document");
  assert.equal(await fake.contentProviders.get("elelem-review").provideTextDocumentContent(left), "", "closed: the review is over");
});

withChat("a new file is reviewed against an empty document, then written by the daemon", async ({ view }) => {
  const file = path.join(fake.workspaceFolder, "fresh.txt");
  const { results, reviews } = await turnWithReviews(view, '!tool write {"path":"fresh.txt","content":"a new line\\n"}', () => ({ action: "acceptAll" }));
  assert.equal(reviews[0].newFile, true);
  assert.equal(results.at(-1).ok, true, JSON.stringify(results.at(-1).result));
  assert.equal(fs.readFileSync(file, "utf8"), "a new line\n");
});

withChat("Stop during a review withdraws it: the card says so and nothing changes", async ({ view }) => {
  const { document } = openFile("f.py");
  const { last } = await turnWithReviews(view, '!tool edit {"path":"f.py","old":"line_3 = 3\\n","new":"line_3 = 30\\n"}', () => {
    view.receive({ type: "stop" });
    return undefined;
  });
  assert.equal(last.stopReason, "cancelled");
  const done = await waitFor(view, { type: "reviewDone" });
  assert.equal(done.accepted, null);
  assert.equal(document.getText(), LINES());
  assert.equal(fake.applied.length, 0);
});

test("the hunk recipe: protocol.md's rules, CRLF lines, and hostile hunks refused", () => {
  const old = "a\r\nb\nc\n";
  const hunks = [
    { id: 1, oldStart: 1, oldLines: 1, newStart: 1, newLines: 1 },
    { id: 2, oldStart: 3, oldLines: 0, newStart: 4, newLines: 1 },
  ];
  const neu = "A\r\nb\nc\nd\n";
  assert.equal(applyHunks(old, neu, hunks, [1, 2]), neu);
  assert.equal(applyHunks(old, neu, hunks, [2]), "a\r\nb\nc\nd\n");
  assert.equal(applyHunks(old, neu, hunks, [1]), "A\r\nb\nc\n");
  assert.equal(applyHunks(old, neu, hunks, []), old);
  for (const bad of [
    { id: 9, oldStart: 7, oldLines: 1, newStart: 1, newLines: 1 },
    { id: 9, oldStart: 1, oldLines: 1, newStart: 9, newLines: 3 },
    { id: 9, oldStart: -1, oldLines: 1, newStart: 1, newLines: 1 },
    { id: 9, oldStart: 1.5, oldLines: 1, newStart: 1, newLines: 1 },
  ]) {
    assert.throws(() => applyHunks(old, neu, [bad], [9]), /hunk 9 lies outside the text/);
  }
});
