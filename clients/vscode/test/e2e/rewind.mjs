// End to end: undo the last turn in real VS Code (code-server), issue 17.
// Usage: node test/e2e/rewind.mjs URL SCREENSHOT WORKSPACE. The workspace holds notes.txt
// ("first version"), written by e2e.sh.
import * as fs from "fs";
import * as path from "path";
import { check, openChat, openFile, runCase, runCommand, send, step } from "./lib.mjs";

const [url, screenshot, workspace] = process.argv.slice(2);
const FILE = path.join(workspace, "notes.txt");

async function editorText(page) {
  return (await page.locator(".editor-instance .monaco-editor .view-lines").filter({ visible: true }).first().innerText()).replace(/\u00a0/g, " ");
}

await runCase("rewind", screenshot, async (page) => {
  step(`open ${url}`);
  await page.goto(url);
  await page.waitForSelector(".monaco-workbench");
  await page.waitForTimeout(1500);
  await openFile(page, "notes.txt");
  await page.waitForTimeout(1000);
  const frame = await openChat(page);

  step("a turn writes notes.txt (accepted in the chat's card, then saved)");
  await send(frame, '!tool write {"path":"notes.txt","content":"second version\\n"}');
  await frame.locator(".review:not(.done) button.review-acceptAll").click();
  await frame.waitForFunction(() => [...document.querySelectorAll(".review-outcome")].some((n) => n.textContent.includes("accepted by the user")));
  await frame.waitForSelector("#send:not([disabled])");
  check((await editorText(page)).includes("second version"), "the editor does not show the agent's text");
  await page.click(".editor-instance .monaco-editor .view-lines");
  await page.keyboard.press("Control+S");
  await page.waitForFunction(() => !document.querySelector(".tab.active.dirty"));
  check(fs.readFileSync(FILE, "utf8") === "second version\n", "not saved");
  check((await frame.locator("button.restore").count()) >= 1, "no Restore checkpoint action on the user message");

  step("Elelem: Undo Last Turn: the modal names notes.txt; Restore");
  await runCommand(page, "Elelem: Undo Last Turn");
  const dialog = page.locator(".monaco-dialog-box");
  await dialog.waitFor();
  const said = await dialog.innerText();
  check(/Restore the checkpoint before turn \d+\?/.test(said) && /Restored: notes\.txt/.test(said), `the confirmation: ${said}`);
  await page.screenshot({ path: screenshot });
  await dialog.locator(".monaco-button", { hasText: "Restore" }).first().click();

  step("the file and its open document show the restored content; the chat is redrawn");
  await frame.waitForFunction(() => [...document.querySelectorAll(".notice.info")].some((n) => /Rewound to before turn \d+: 1 file restored\./.test(n.textContent)));
  check(fs.readFileSync(FILE, "utf8") === "first version\n", `the disk: ${fs.readFileSync(FILE, "utf8")}`);
  const deadline = Date.now() + 20_000;
  while (!(await editorText(page)).includes("first version")) {
    check(Date.now() < deadline, `the open document still shows: ${await editorText(page)}`);
    await page.waitForTimeout(250);
  }
  check(!(await editorText(page)).includes("second version"), "the editor still shows the undone text");
  check((await frame.locator(".turn.user").count()) === 0, "the undone turn's message is still in the chat");
});
