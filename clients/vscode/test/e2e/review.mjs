// End to end: review of the agent's changes in real VS Code (code-server), issue 16.
// Usage: node test/e2e/review.mjs URL SCREENSHOT WORKSPACE. The workspace holds review.py
// (lines `line_01 = 1` .. `line_20 = 20`), written by e2e.sh.
import * as fs from "fs";
import * as path from "path";
import { approveIfAsked, check, openChat, openFile, runCase, runCommand, send, step, widenSidebar } from "./lib.mjs";

const [url, screenshot, workspace] = process.argv.slice(2);
const FILE = path.join(workspace, "review.py");
const lines = (edit = {}) => Array.from({ length: 20 }, (_, i) => {
  const n = i + 1;
  return `line_${String(n).padStart(2, "0")} = ${edit[n] ?? n}\n`;
}).join("");

/** The text of the visible (non-diff) editor, as it shows. */
async function editorText(page) {
  const text = await page.locator(".editor-instance .monaco-editor .view-lines").filter({ visible: true }).first().innerText();
  return text.replace(/\u00a0/g, " ");
}

async function lastTool(frame) {
  const tool = frame.locator("details.tool:not(.running)").last();
  await tool.waitFor();
  return tool;
}

await runCase("review", screenshot, async (page) => {
  step(`open ${url}`);
  await page.goto(url);
  await page.waitForSelector(".monaco-workbench");
  await page.waitForTimeout(1500);
  await openFile(page, "review.py");
  await page.waitForTimeout(1500);
  const frame = await openChat(page);

  step("type into review.py without saving: the agent's read sees the unsaved line");
  await page.click(".editor-instance .monaco-editor .view-lines");
  await page.keyboard.press("Control+Home");
  await page.keyboard.type("# unsaved line\n");
  check(!fs.readFileSync(FILE, "utf8").includes("unsaved"), "the typed line reached the disk");
  await send(frame, '!tool read {"path":"review.py"}');
  await frame.waitForFunction(() => [...document.querySelectorAll("details.tool.ok pre.result")].some((r) => r.textContent.includes("# unsaved line")));
  await frame.waitForSelector("#send:not([disabled])");

  step("an edit is reviewed in the diff editor and accepted from its title bar");
  await send(frame, '!tool edit {"path":"review.py","old":"line_05 = 5\\n","new":"line_05 = 50\\n"}');
  await page.waitForSelector(".monaco-diff-editor", { timeout: 60_000 });
  await frame.waitForSelector(".review:not(.done) > .review-hunk");
  const title = await page.locator(".tab.active").first().textContent();
  check(/review\.py: Elelem's change \(1 hunk\)/.test(title), `the diff tab's title: ${title}`);
  const accept = page.locator('.editor-actions .action-label[aria-label^="Accept All Changes"]');
  await accept.first().click();
  await frame.waitForFunction(() => [...document.querySelectorAll(".review-outcome")].some((n) => n.textContent.includes("accepted by the user")));
  await frame.waitForSelector("#send:not([disabled])");
  await page.waitForFunction(() => !document.querySelector(".monaco-diff-editor"));
  let shown = await editorText(page);
  check(shown.includes("line_05 = 50") && shown.includes("# unsaved line"), `the editor after the edit:\n${shown}`);
  check(fs.readFileSync(FILE, "utf8") === lines(), "the daemon wrote the disk: the change must stay unsaved in the editor");

  step("save: no 'file is newer' conflict, and the disk has what the editor showed");
  await page.click(".editor-instance .monaco-editor .view-lines");
  await page.keyboard.press("Control+S");
  await page.waitForTimeout(1500);
  check((await page.locator(".monaco-dialog-box").count()) === 0, "a dialog opened on save");
  const notices = await page.locator(".notifications-toasts").innerText().catch(() => "");
  check(!/newer/i.test(notices), `a save conflict: ${notices}`);
  check(fs.readFileSync(FILE, "utf8") === "# unsaved line\n" + lines({ 5: 50 }), `the disk after save:\n${fs.readFileSync(FILE, "utf8")}`);

  step("a write with two hunks: accept hunk 1, reject hunk 2 in the chat's card");
  const content = "# unsaved line\n" + lines({ 2: 20, 5: 50, 18: 180 });
  await send(frame, `!tool write ${JSON.stringify({ path: "review.py", content })}`);
  await page.waitForSelector(".monaco-diff-editor");
  await frame.waitForFunction(() => document.querySelectorAll(".review:not(.done) > .review-hunk").length === 2);
  await widenSidebar(page, 160);
  await page.waitForTimeout(800);
  await frame.evaluate(() => document.querySelector(".review:not(.done)").scrollIntoView({ block: "end" }));
  step(`screenshot ${screenshot}`);
  await page.screenshot({ path: screenshot });
  await frame.locator('.review:not(.done) input[data-hunk="2"]').uncheck();
  await frame.locator(".review:not(.done) button.review-apply").click();
  await frame.waitForFunction(() => [...document.querySelectorAll(".review-outcome")].some((n) => /applied 1 of 2 hunks; hunk 2 .* rejected/.test(n.textContent)));
  await frame.waitForSelector("#send:not([disabled])");
  await page.waitForFunction(() => !document.querySelector(".monaco-diff-editor"));
  shown = await editorText(page);
  check(shown.includes("line_02 = 20") && shown.includes("line_18 = 18") && !shown.includes("line_18 = 180"), `the editor after the partial acceptance:\n${shown}`);

  step("Ctrl+Z undoes the agent's change in one step");
  await page.click(".editor-instance .monaco-editor .view-lines");
  await page.keyboard.press("Control+Z");
  await page.waitForTimeout(500);
  shown = await editorText(page);
  check(shown.includes("line_02 = 2\n") && shown.includes("line_05 = 50") && shown.includes("# unsaved line"), `the editor after one undo:\n${shown}`);
  await runCommand(page, "File: Revert File");
  await page.waitForFunction(() => !document.querySelector(".tab.active.dirty"));

  step("issue 31, item 3: an accepted edit is on the disk before the agent's next command (grep)");
  const clean = fs.readFileSync(FILE, "utf8");
  check(clean.includes("line_07 = 7\n"), `the disk before: ${clean}`);
  const script = [
    ["edit", { path: "review.py", old: "line_07 = 7\n", new: "line_07 = 70\n" }],
    ["execute", { command: "grep -c 'line_07 = 70' review.py || echo NOT-ON-DISK" }],
  ];
  await send(frame, `!tools ${JSON.stringify(script)}`);
  await frame.locator(".review:not(.done) button.review-acceptAll").click();
  step("the permission question for execute is in the chat's card, as buttons (no quick pick)");
  await frame.locator(".notice.ask.waiting button.ask-choice").first().waitFor();
  await frame.evaluate(() => document.querySelector(".notice.ask.waiting").scrollIntoView({ block: "end" }));
  await page.screenshot({ path: path.join(path.dirname(screenshot), "question.png") });
  await approveIfAsked(page, frame.locator("details.tool.ok .name", { hasText: "execute" }), frame);
  const grep = await frame.locator("details.tool.ok", { hasText: "execute" }).last().locator("pre.result").textContent();
  check(!grep.includes("NOT-ON-DISK") && /\b1\b/.test(grep), `grep after the accepted edit: ${grep}`);
  check(fs.readFileSync(FILE, "utf8") === clean.replace("line_07 = 7\n", "line_07 = 70\n"), "the disk does not hold the accepted edit");
  check((await page.locator(".tab.active.dirty").count()) === 0, "the document was left unsaved");
  await frame.waitForSelector("#send:not([disabled])");

  step("issue 31, item 9: the diff editor opens beside while the user types in the chat: no keystroke is lost");
  await send(frame, '!tool edit {"path":"review.py","old":"line_09 = 9\\n","new":"line_09 = 90\\n"}');
  await frame.click("#input");
  const sentence = "please look at the div function and then try it again";
  let typed = "";
  for (const ch of sentence) {
    await page.keyboard.type(ch);
    typed += ch;
    await page.waitForTimeout(60);
  }
  await page.waitForSelector(".monaco-diff-editor");
  for (const ch of " and then more") {
    await page.keyboard.type(ch);
    typed += ch;
    await page.waitForTimeout(60);
  }
  const kept = await frame.inputValue("#input");
  check(kept === typed, `the prompt box holds ${JSON.stringify(kept)}, not what was typed`);
  check(fs.readFileSync(FILE, "utf8").includes("line_09 = 9\n"), "a keystroke decided the review");
  await frame.locator(".review:not(.done) button.review-rejectAll").click();
  await frame.waitForSelector("#send:not([disabled])");
  await frame.fill("#input", "");

  step("issue 31, item 9: the user types into the file during a review, then accepts: the card says conflict, not Accepted");
  await send(frame, '!tool edit {"path":"review.py","old":"line_11 = 11\\n","new":"line_11 = 110\\n"}');
  await frame.waitForSelector(".review:not(.done) > .review-hunk");
  // the file's own tab (Ctrl+P would reveal the diff editor, whose left side is the file)
  await page.locator(".tabs-container .tab").filter({ hasText: "review.py" }).filter({ hasNotText: "Elelem" }).first().click();
  await page.locator(".editor-instance .monaco-editor .view-lines").filter({ visible: true }).first().click();
  await page.keyboard.press("Control+End");
  await page.keyboard.type("# typed during the review\n");
  for (let i = 0; !(await editorText(page)).includes("# typed during the review"); i++) {
    check(i < 40, "the typed line is not in review.py");
    await page.waitForTimeout(250);
  }
  await frame.locator(".review:not(.done) button.review-acceptAll").click();
  await frame.waitForSelector("body:not(.busy)");
  const decision = await frame.locator(".review.done .review-decision").last().textContent();
  check(/conflict/.test(decision) && !/^Accepted/.test(decision), `the card says: ${decision}`);
  check(!fs.readFileSync(FILE, "utf8").includes("line_11 = 110"), "the conflicted change reached the disk");
  await runCommand(page, "File: Revert File");
});
