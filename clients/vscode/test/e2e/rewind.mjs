// End to end: undo the last turn in real VS Code (code-server), issues 17 and 31.
// Usage: node test/e2e/rewind.mjs URL SCREENSHOT WORKSPACE. The workspace holds notes.txt
// ("first version", "alpha", "beta", "gamma", "delta"), written by e2e.sh.
import * as fs from "fs";
import * as path from "path";
import { check, openChat, openFile, runCase, runCommand, send, step } from "./lib.mjs";

const [url, screenshot, workspace] = process.argv.slice(2);
const FILE = path.join(workspace, "notes.txt");
const ORIGINAL = "first version\nalpha\nbeta\ngamma\ndelta\n";

async function editorText(page) {
  // Monaco keeps its line elements out of order after some edits (each placed by its `top`):
  // read them in the order they are seen, top to bottom.
  const text = await page.locator(".editor-instance .monaco-editor .view-lines").filter({ visible: true }).first().evaluate((node) =>
    [...node.querySelectorAll(":scope > .view-line")]
      .map((line) => [line.getBoundingClientRect().top, line.innerText])
      .sort((a, b) => a[0] - b[0])
      .map(([, text]) => text)
      .join("\n"));
  return text.replace(/\u00a0/g, " ");
}

/** Wait until the visible editor shows `want` (line by line, as Monaco renders it). */
async function editorShows(page, want, what) {
  const deadline = Date.now() + 20_000;
  const lines = want.replace(/\n$/, "").split("\n");
  for (;;) {
    const shown = (await editorText(page)).split("\n").filter((l) => l !== "");
    if (JSON.stringify(shown) === JSON.stringify(lines)) return;
    check(Date.now() < deadline, `${what}: the editor shows ${JSON.stringify(shown)}, not ${JSON.stringify(lines)}`);
    await page.waitForTimeout(250);
  }
}

async function acceptInChat(frame) {
  await frame.locator(".review:not(.done) button.review-acceptAll").click();
  await frame.waitForFunction(() => [...document.querySelectorAll(".review-outcome")].some((n) => n.textContent.includes("accepted by the user")));
  await frame.waitForSelector("#send:not([disabled])");
}

/** Elelem: Undo Last Turn, then the modal's "Restore" (its text checked by `said`). */
async function undoLastTurn(page, frame, said, shot) {
  const rewound = () => [...document.querySelectorAll(".notice.info")].filter((x) => /Rewound to before turn \d+/.test(x.textContent)).length;
  const before = await frame.evaluate(rewound);
  await runCommand(page, "Elelem: Undo Last Turn");
  const dialog = page.locator(".monaco-dialog-box");
  await dialog.waitFor();
  const text = await dialog.innerText();
  said(text);
  if (shot) await page.screenshot({ path: shot });
  await dialog.locator(".monaco-button").filter({ hasText: /^Restore$/ }).first().click();
  await frame.waitForFunction((n) => [...document.querySelectorAll(".notice.info")].filter((x) => /Rewound to before turn \d+/.test(x.textContent)).length > n, before);
  await page.waitForTimeout(500);
}

await runCase("rewind", screenshot, async (page) => {
  step(`open ${url}`);
  await page.goto(url);
  await page.waitForSelector(".monaco-workbench");
  await page.waitForTimeout(1500);
  await openFile(page, "notes.txt");
  await page.waitForTimeout(1000);
  const frame = await openChat(page);

  step("a first turn reads notes.txt (it stays: its card must survive the undo of the next turn)");
  await send(frame, '!tool read {"path":"notes.txt"}');
  await frame.waitForSelector("details.tool.ok");
  await frame.waitForSelector("#send:not([disabled])");

  step("a turn writes notes.txt, accepted in the chat's card: it is saved (the document was clean)");
  await send(frame, '!tool write {"path":"notes.txt","content":"second version\\n"}');
  await acceptInChat(frame);
  await editorShows(page, "second version\n", "after the accepted write");
  check(fs.readFileSync(FILE, "utf8") === "second version\n", `the disk after Accept: ${fs.readFileSync(FILE, "utf8")}`);
  check((await frame.locator("button.restore").count()) >= 1, "no Restore checkpoint action on the user message");

  step("Elelem: Undo Last Turn: the modal names notes.txt; Restore");
  await undoLastTurn(page, frame, (said) => check(/Restore the checkpoint before turn \d+\?/.test(said) && /Restored: notes\.txt/.test(said), `the confirmation: ${said}`), screenshot);

  step("the disk and the document are byte for byte as before the turn; the kept turn's card is still drawn");
  await frame.waitForFunction(() => [...document.querySelectorAll(".notice.info")].some((n) => /Rewound to before turn \d+: 1 file restored\./.test(n.textContent)));
  check(fs.readFileSync(FILE, "utf8") === ORIGINAL, `the disk: ${JSON.stringify(fs.readFileSync(FILE, "utf8"))}`);
  await editorShows(page, ORIGINAL, "after Undo");
  await page.waitForFunction(() => !document.querySelector(".tab.active.dirty"));
  check((await frame.locator(".turn.user").count()) === 1, "the undone turn's message is still in the chat, or the kept one is gone");
  check((await frame.locator("details.tool").count()) === 1, `the kept turn's tool card: ${await frame.locator("details.tool").count()} cards`);

  step("issue 31, item 2: the user's own unsaved edit elsewhere in the file survives Undo; the agent's change goes");
  await page.click(".editor-instance .monaco-editor .view-lines");
  await page.keyboard.press("Control+Home");
  await page.keyboard.type("# my own line\n", { delay: 40 });
  const mine = "# my own line\n" + ORIGINAL;
  await send(frame, '!tool edit {"path":"notes.txt","old":"delta\\n","new":"DELTA\\n"}');
  await acceptInChat(frame);
  await editorShows(page, "# my own line\n" + ORIGINAL.replace("delta", "DELTA"), "after the accepted edit");
  check(!fs.readFileSync(FILE, "utf8").includes("# my own line"), "the user's unsaved line was saved for them");
  await undoLastTurn(page, frame, (said) => check(/notes\.txt/.test(said), `the confirmation: ${said}`));
  await editorShows(page, mine, "after Undo with the user's unsaved edit");
  check(fs.readFileSync(FILE, "utf8") === ORIGINAL, `the disk: ${JSON.stringify(fs.readFileSync(FILE, "utf8"))}`);
  check((await page.locator(".tab.active.dirty").count()) === 1, "the user's edit is no longer unsaved");
  await page.screenshot({ path: path.join(path.dirname(screenshot), "undo.png") });

  step("issue 40: Ctrl+S right after that Undo saves: no \"the content of the file is newer\"");
  await page.click(".editor-instance .monaco-editor .view-lines");
  await page.keyboard.press("Control+s");
  await page.waitForFunction(() => !document.querySelector(".tab.active.dirty"), null, { timeout: 10000 }).catch(() => undefined);
  const newer = await page.locator(".notifications-toasts, .monaco-dialog-box").filter({ hasText: /newer/ }).count();
  check(newer === 0, "saving after Undo said the content of the file is newer");
  check(fs.readFileSync(FILE, "utf8") === mine, `the disk after Ctrl+S: ${JSON.stringify(fs.readFileSync(FILE, "utf8"))}`);
  check((await page.locator(".tab.active.dirty").count()) === 0, "the document is still unsaved after Ctrl+S");
  fs.writeFileSync(FILE, ORIGINAL); // the next steps start from the original again
  await runCommand(page, "File: Revert File");
  await editorShows(page, ORIGINAL, "reverted to the original for the next step");

  step("issue 40, as met: the agent's edit saved (the document was clean), then the user's unsaved line, then Undo; Ctrl+S saves at once");
  // Here the daemon rewrites the file under the open unsaved document: VS Code's copy of the
  // disk is then stale, and without the reload a save met "the content of the file is newer".
  // The edit changes the file's size, as the user's did: VS Code's save checks the disk's
  // modification time AND its size against what the document last read (an etag of both), so
  // a rewrite of the same size (delta -> DELTA) passed its check even without the reload.
  const EDITED = ORIGINAL.replace("delta", "delta, edited by the agent");
  await send(frame, '!tool edit {"path":"notes.txt","old":"delta\\n","new":"delta, edited by the agent\\n"}');
  await acceptInChat(frame);
  await editorShows(page, EDITED, "after the accepted edit");
  await page.waitForFunction(() => !document.querySelector(".tab.active.dirty"));
  check(fs.readFileSync(FILE, "utf8") === EDITED, "the agent's edit of a clean document was not saved");
  await page.click(".editor-instance .monaco-editor .view-lines");
  await page.keyboard.press("Control+Home");
  await page.keyboard.type("# typed after the edit\n", { delay: 40 });
  await page.waitForSelector(".tab.active.dirty");
  await undoLastTurn(page, frame, (said) => check(/notes\.txt/.test(said), `the confirmation: ${said}`));
  const kept = "# typed after the edit\n" + ORIGINAL;
  await editorShows(page, kept, "after Undo of a saved edit, with the user's later unsaved line");
  check(fs.readFileSync(FILE, "utf8") === ORIGINAL, `the disk after Undo: ${JSON.stringify(fs.readFileSync(FILE, "utf8"))}`);
  await page.click(".editor-instance .monaco-editor .view-lines");
  await page.keyboard.press("Control+s");
  await page.waitForFunction(() => !document.querySelector(".tab.active.dirty"), null, { timeout: 10000 }).catch(() => undefined);
  const newerAgain = await page.locator(".notifications-toasts, .monaco-dialog-box").filter({ hasText: /newer/ }).count();
  if (newerAgain) await page.screenshot({ path: path.join(path.dirname(screenshot), "rewind-newer.failed.png") });
  check(newerAgain === 0, "saving after Undo said the content of the file is newer");
  check(fs.readFileSync(FILE, "utf8") === kept, `the disk after Ctrl+S: ${JSON.stringify(fs.readFileSync(FILE, "utf8"))}`);
  check((await page.locator(".tab.active.dirty").count()) === 0, "the document is still unsaved after Ctrl+S");
  fs.writeFileSync(FILE, ORIGINAL);
  await runCommand(page, "File: Revert File");
  await editorShows(page, ORIGINAL, "reverted to the original for the next step");

  step("issues 29, 31: the modal names a deleted file by the turn the user counts; a file changed under it is asked again");
  const MADE = path.join(workspace, "made.txt");
  await send(frame, '!tool write {"path":"made.txt","content":"made by the agent\\n"}');
  await acceptInChat(frame);
  check(fs.existsSync(MADE), "the agent's made.txt is on the disk");
  await runCommand(page, "Elelem: Undo Last Turn");
  const modal = page.locator(".monaco-dialog-box");
  await modal.waitFor();
  const first = await modal.innerText();
  check(/Restore the checkpoint before turn 2\?/.test(first) && /Created by turn 2 \(deleted\): made\.txt/.test(first) && !/You lose/.test(first),
    `the first confirmation (turn 2 as the user counts; its id is 5): ${first}`);
  fs.writeFileSync(MADE, "the user's words\n"); // typed elsewhere while the modal is open
  await modal.locator(".monaco-button").filter({ hasText: /^Restore$/ }).first().click();
  await page.waitForFunction(() => /this is the plan now/.test(document.querySelector(".monaco-dialog-box")?.innerText ?? ""));
  const again = await modal.innerText();
  check(/You lose your edits \(changed outside the agent since\): made\.txt/.test(again), `the second confirmation: ${again}`);
  check(fs.readFileSync(MADE, "utf8") === "the user's words\n", "nothing was changed before the user agreed");
  await page.screenshot({ path: path.join(path.dirname(screenshot), "rewind-again.png") });
  const said = () => [...document.querySelectorAll(".notice.info")].filter((n) => /Rewound to before turn 2:/.test(n.textContent)).length;
  const earlier = await frame.evaluate(said); // the first Undo above rewound a turn 2 too
  await modal.locator(".monaco-button").filter({ hasText: /^Restore$/ }).first().click();
  await frame.waitForFunction((n) => [...document.querySelectorAll(".notice.info")].filter((x) => /Rewound to before turn 2:/.test(x.textContent)).length > n, earlier);
  check(!fs.existsSync(MADE), "made.txt, agreed to lose, is deleted");

  step("issue 31, item 11: Open Session… with only this session stored says so");
  await runCommand(page, "Elelem: Open Session");
  const toast = page.locator(".notifications-toasts .notification-toast", { hasText: "Elelem:" }).last();
  await toast.waitFor();
  const toastText = await toast.innerText();
  check(/the only stored session for this folder is the one open here/.test(toastText), `Open Session… said: ${toastText}`);
  await runCommand(page, "File: Revert File");
});
