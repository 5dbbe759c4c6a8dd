// Issue 17 through the real daemon (stub provider): Undo Last Turn and Restore Checkpoint
// with the dry run's modal, the rewind, open documents reloaded, the chat redrawn, and each
// refusal in words; `input/ask` kind confirm (`/undo` typed in the chat).
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("fs");
const path = require("path");
const { vscode, fake, activate, deactivate, waitFor, send, DAEMON_ENV } = require("./helpers");

function withChat(name, body, settings, options) {
  test(name, async () => {
    const env = await activate(settings, options);
    try {
      await body(env);
    } catch (error) {
      console.error(`log of "${name}":\n${fake.logLines.join("\n")}\nmessages: ${JSON.stringify(fake.messages)}`);
      throw error;
    } finally {
      await deactivate(env.context);
    }
  });
}

/** A turn whose `write` is reviewed and accepted in the chat's card. */
async function writeTurn(view, file, content) {
  const accept = (m) => m.type === "review" && view.receive({ type: "review", reviewId: m.reviewId, action: "acceptAll" });
  view.bus.on("message", accept);
  try {
    return await send(view, `!tool write ${JSON.stringify({ path: file, content })}`);
  } finally {
    view.bus.off("message", accept);
  }
}

withChat("Undo Last Turn: the modal names the files, the file comes back, its document reloads, the chat redraws", async ({ view }) => {
  const file = path.join(fake.workspaceFolder, "a.txt");
  fs.writeFileSync(file, "one\n");
  await send(view, "!echo hello");
  const { last } = await writeTurn(view, "a.txt", "two\n");
  assert.equal(fs.readFileSync(file, "utf8"), "two\n");
  const document = fake.open(file, "two\n");
  let asked;
  fake.answers.push((kind, choices, options) => {
    asked = { kind, choices, detail: options?.detail };
    return "Restore";
  });
  await vscode.commands.executeCommand("elelem.undoLastTurn");
  assert.equal(asked.kind, "warning");
  assert.deepEqual(asked.choices, ["Restore"]);
  assert.match(fake.messages.at(-1)[1], new RegExp(`before turn ${last.turnId}`));
  assert.match(asked.detail, /Restored: a\.txt/);
  assert.match(asked.detail, new RegExp(`The conversation loses turn ${last.turnId}\\.`));
  assert.equal(fs.readFileSync(file, "utf8"), "one\n");
  assert.ok(fake.shown.includes(document) && fake.executed.some(([id]) => id === "workbench.action.files.revert"), "the open document was reverted");
  const info = await waitFor(view, (m) => m.type === "say" && /^Rewound to before turn/.test(m.text));
  assert.equal(info.text, `Rewound to before turn ${last.turnId}: 1 file restored.`);
  // issue 31: redrawn from the transcript cut before the undone turn (cards and all), not from the model's messages
  const redrawn = view.posted.slice(view.posted.map((m) => m.type).lastIndexOf("clear"));
  assert.deepEqual(redrawn.filter((m) => m.type === "user").map((m) => m.text), ["!echo hello"]);
  assert.ok(!redrawn.some((m) => m.type === "history"));
  const turns = await waitFor(view, (m) => m.type === "turns" && m.turns.length === 1);
  assert.equal(turns.turns[0].prompt, "!echo hello");
});

withChat("a dirty document among the files is named before anything is touched; declining changes nothing", async ({ view }) => {
  const file = path.join(fake.workspaceFolder, "b.txt");
  fs.writeFileSync(file, "one\n");
  await writeTurn(view, "b.txt", "two\n");
  const document = fake.open(file, "two, and typing\n");
  document.isDirty = true;
  let detail;
  fake.answers.push((kind, choices, options) => {
    detail = options.detail;
    return undefined; // Cancel
  });
  await vscode.commands.executeCommand("elelem.undoLastTurn");
  assert.match(detail, /Unsaved in the editor .*: b\.txt/);
  assert.equal(fs.readFileSync(file, "utf8"), "two\n");
});

withChat("Restore and Discard Unsaved Changes reverts a document the user typed into", async ({ view }) => {
  const file = path.join(fake.workspaceFolder, "u.txt");
  fs.writeFileSync(file, "one\n");
  const document = fake.open(file, "one\n");
  await writeTurn(view, "u.txt", "two\n");
  assert.equal(document.getText(), "two\n", "applied to the document");
  assert.equal(fs.readFileSync(file, "utf8"), "two\n", "and saved: the document was clean");
  document.type("two, and typing\n");
  let offered;
  fake.answers.push((kind, choices, options) => {
    offered = { choices, detail: options.detail };
    return "Restore and Discard Unsaved Changes";
  });
  await vscode.commands.executeCommand("elelem.undoLastTurn");
  assert.deepEqual(offered.choices, ["Restore", "Restore and Discard Unsaved Changes"]);
  assert.match(offered.detail, /Unsaved in the editor .*: u\.txt/);
  assert.ok(fake.shown.includes(document) && fake.executed.some(([id]) => id === "workbench.action.files.revert"), "the unsaved document was reverted");
  await waitFor(view, (m) => m.type === "say" && /^Rewound/.test(m.text));
});

withChat("Undo Last Turn takes the agent's change out of a document and keeps the user's own unsaved edit (issue 31)", async ({ view }) => {
  const file = path.join(fake.workspaceFolder, "m.txt");
  const original = "one\ntwo\nthree\nfour\nfive\n";
  fs.writeFileSync(file, original);
  const document = fake.open(file, original);
  document.type("# mine\n" + original);
  const accept = (m) => m.type === "review" && view.receive({ type: "review", reviewId: m.reviewId, action: "acceptAll" });
  view.bus.on("message", accept);
  try {
    await send(view, '!tool edit {"path":"m.txt","old":"five\\n","new":"FIVE\\n"}');
  } finally {
    view.bus.off("message", accept);
  }
  assert.equal(document.getText(), "# mine\n" + original.replace("five", "FIVE"));
  assert.equal(fs.readFileSync(file, "utf8"), original, "the user's unsaved edit was saved for them");
  fake.answers.push(() => "Restore");
  await vscode.commands.executeCommand("elelem.undoLastTurn");
  await waitFor(view, (m) => m.type === "say" && /^Rewound/.test(m.text));
  assert.equal(document.getText(), "# mine\n" + original, "the buffer is as before the turn");
  assert.equal(fs.readFileSync(file, "utf8"), original, "the disk is as before the turn");
  // issue 40: reloaded from the disk first (so a save is a save), then the kept edit re-applied;
  // the reload lands after the revert command resolved, and must not wipe the re-applied edit
  assert.ok(fake.executed.some(([id]) => id === "workbench.action.files.revert"), "the document was not reloaded from the disk");
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.equal(document.getText(), "# mine\n" + original, "the reload from the disk came after the re-applied edit and wiped it");
  assert.equal(document.isDirty, true, "the user's edit is no longer unsaved");
});

withChat("turns are named as the user counts them, not by turnId (a command between them)", async ({ view }) => {
  const file = path.join(fake.workspaceFolder, "n.txt");
  fs.writeFileSync(file, "one\n");
  await send(view, "!echo hello");
  await send(view, "/help");
  const { last } = await writeTurn(view, "n.txt", "two\n");
  let asked;
  fake.answers.push((kind, choices, options) => {
    asked = { title: fake.messages.at(-1)[1], detail: options?.detail };
    return "Restore";
  });
  await vscode.commands.executeCommand("elelem.undoLastTurn");
  const info = await waitFor(view, (m) => m.type === "say" && /^Rewound to before turn/.test(m.text));
  assert.notEqual(last.turnId, 2, "the daemon counts the command: this test needs turnId != number");
  assert.equal(asked.title, "Restore the checkpoint before turn 2?");
  assert.match(asked.detail, /The conversation loses turn 2\./);
  assert.equal(info.text, "Rewound to before turn 2: 1 file restored.");
});

withChat("the plan names each deleted file's turn, what is kept and why, the user's files lost; confirm names exactly them (issues 29, 31)", async ({ view }) => {
  const notes = path.join(fake.workspaceFolder, "p.txt");
  const made = path.join(fake.workspaceFolder, "made.txt");
  const big = path.join(fake.workspaceFolder, "big.csv");
  fs.writeFileSync(notes, "the user's notes\n");
  fs.writeFileSync(big, "id,value\n" + "1,22222222\n".repeat(2000)); // over the 4K limit
  await send(view, "!echo hello");
  await send(view, "/help"); // a command takes a turnId, not a number
  const second = (await writeTurn(view, "p.txt", "the agent's notes\n")).last;
  await writeTurn(view, "made.txt", "made by the agent\n");
  await writeTurn(view, "big.csv", "one line\n");
  assert.notEqual(second.turnId, 2, "this test needs turnId != number");
  const asked = [];
  fake.answers.push((kind, offered) => offered.find((i) => i.label.startsWith("Turn 2:")));
  fake.answers.push((kind, choices, options) => {
    asked.push(options.detail);
    fs.writeFileSync(notes, "typed while the question was open\n"); // the user's edit, after the plan was shown
    return "Restore";
  });
  fake.answers.push((kind, choices, options) => {
    asked.push(options.detail);
    return "Restore";
  });
  await vscode.commands.executeCommand("elelem.restoreCheckpoint");
  const info = await waitFor(view, (m) => m.type === "say" && /^Rewound to before turn/.test(m.text));
  assert.equal(info.text, "Rewound to before turn 2: 2 files restored.");
  assert.equal(asked.length, 2, "asked again: a file of the user's changed under the question");
  assert.match(asked[0], /^Created by turn 3 \(deleted\): made\.txt$/m);
  assert.match(asked[0], /^Left as they are \(no checkpoint holds them\), over the size limit when turn 2 began: big\.csv$/m);
  assert.doesNotMatch(asked[0], /You lose/);
  assert.match(asked[0], /The conversation loses turns 2, 3, 4\./);
  assert.match(asked[1], /^Your files changed since the last question: this is the plan now\.$/m);
  assert.match(asked[1], /^⚠ You lose your edits \(changed outside the agent since\): p\.txt$/m);
  assert.equal(fs.readFileSync(notes, "utf8"), "the user's notes\n", "restored: the user agreed to lose the edit");
  assert.ok(!fs.existsSync(made));
  assert.equal(fs.readFileSync(big, "utf8"), "one line\n", "no checkpoint held it: left as it is");
}, { "elelem.env": { ...DAEMON_ENV, ELELEM_CHECKPOINTS_MAX_FILE: "4K" } });

withChat("a user's file changed under the question, then declined: nothing changes", async ({ view }) => {
  const notes = path.join(fake.workspaceFolder, "q.txt");
  fs.writeFileSync(notes, "one\n");
  await writeTurn(view, "q.txt", "two\n");
  fake.answers.push(() => {
    fs.writeFileSync(notes, "mine\n");
    return "Restore";
  });
  let again;
  fake.answers.push((kind, choices, options) => {
    again = options.detail;
    return undefined; // Cancel
  });
  await vscode.commands.executeCommand("elelem.undoLastTurn");
  assert.match(again, /You lose your edits \(changed outside the agent since\): q\.txt/);
  assert.equal(fs.readFileSync(notes, "utf8"), "mine\n");
});

withChat("Restore Checkpoint… lists the turns, newest first, and rewinds the one picked", async ({ view }) => {
  const file = path.join(fake.workspaceFolder, "c.txt");
  fs.writeFileSync(file, "zero\n");
  const first = (await writeTurn(view, "c.txt", "one\n")).last;
  await writeTurn(view, "c.txt", "two\n");
  let items;
  fake.answers.push((kind, offered) => {
    items = offered;
    return offered.find((i) => i.turnId === first.turnId);
  });
  fake.answers.push(() => "Restore");
  await vscode.commands.executeCommand("elelem.restoreCheckpoint");
  assert.equal(items.length, 2);
  assert.ok(items[0].turnId > items[1].turnId, "newest first");
  assert.match(items[0].detail, /1 file: c\.txt/);
  assert.equal(fs.readFileSync(file, "utf8"), "zero\n");
});

withChat("the chat's Restore action on a user message rewinds that turn", async ({ view }) => {
  const file = path.join(fake.workspaceFolder, "d.txt");
  fs.writeFileSync(file, "zero\n");
  const { last } = await writeTurn(view, "d.txt", "one\n");
  fake.answers.push(() => "Restore");
  view.receive({ type: "rewind", turnId: last.turnId });
  await waitFor(view, (m) => m.type === "say" && /^Rewound/.test(m.text));
  assert.equal(fs.readFileSync(file, "utf8"), "zero\n");
});

withChat("refusals in words: no turn to undo, a turn dropped already", async ({ view, chat }) => {
  await vscode.commands.executeCommand("elelem.undoLastTurn");
  assert.match(fake.messages.at(-1)[1], /nothing to undo/);
  const { last } = await send(view, "!echo hi");
  await chat.rewind(last.turnId + 5);
  assert.deepEqual(fake.messages.at(-1), ["error", `Turn ${last.turnId + 5} is no longer in the conversation (an earlier rewind dropped it).`]);
});

withChat("with ELELEM_CHECKPOINTS=0 the files cannot be restored: the conversation alone is offered", async ({ view }) => {
  const file = path.join(fake.workspaceFolder, "e.txt");
  fs.writeFileSync(file, "zero\n");
  await writeTurn(view, "e.txt", "one\n");
  const said = [];
  fake.answers.push((kind, choices) => {
    said.push(fake.messages.at(-1)[1]);
    return choices[0];
  });
  fake.answers.push(() => "Restore");
  await vscode.commands.executeCommand("elelem.undoLastTurn");
  assert.match(said[0], /cannot restore the files of turn \d+: checkpoints are turned off \(ELELEM_CHECKPOINTS=0\)/);
  assert.equal(fs.readFileSync(file, "utf8"), "one\n", "the files stay");
  const info = await waitFor(view, (m) => m.type === "say" && /^Rewound/.test(m.text));
  assert.match(info.text, /\(the conversation only\)/);
}, { "elelem.env": { ...DAEMON_ENV, ELELEM_CHECKPOINTS: "0" } });

withChat("/undo typed in the chat asks a confirm question with the plan, answered yes", async ({ view }) => {
  const file = path.join(fake.workspaceFolder, "f.txt");
  fs.writeFileSync(file, "zero\n");
  await writeTurn(view, "f.txt", "one\n");
  let items;
  fake.answers.push((kind, offered) => {
    items = offered;
    return offered.find((i) => i.answer === "yes");
  });
  await send(view, "/undo");
  assert.ok(items, "a confirm question was asked");
  assert.match(items.find((i) => i.answer === "yes").detail, /files restored: f\.txt/); // the daemon's words
  assert.equal(fs.readFileSync(file, "utf8"), "zero\n");
});

test("every data.kind of a refused rewind has its own words", () => {
  require("./helpers"); // require("vscode") is the fake
  const { rewindError } = require("../dist/lib/rewind.js");
  const { ResponseError } = require("vscode-jsonrpc/node");
  const refused = (code, data) => rewindError(new ResponseError(code, "refused", data), 3);
  assert.match(refused(-32001, { kind: "session_busy", sessionId: "" }), /a turn is running \(here or in another session of this folder\)/);
  assert.equal(refused(-32602, { kind: "unknown_turn", turnId: 3 }), "Turn 3 is no longer in the conversation (an earlier rewind dropped it).");
  assert.match(refused(-32004, { kind: "outside_changes", files: { outside: ["x.py"] } }), /changed outside the agent since turn 3 \(x\.py\)/);
  for (const [reason, words] of [["disabled", /ELELEM_CHECKPOINTS=0/], ["pruned", /pruned/], ["failed", /failed when the turn ran/], ["missing", /gone or broken/], ["tampered", /tampered/]]) {
    assert.match(refused(-32005, { kind: "no_checkpoint", reason }), words);
  }
  assert.equal(refused(-32000, { kind: "checkpoint_failed", reason: "timeout" }), "The restore failed (timeout): nothing was changed.");
  assert.match(refused(-32602, { kind: "invalid_params", errors: ["files: expected a boolean"] }), /^Elelem refused the rewind: refused/);
});
