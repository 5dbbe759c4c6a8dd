// End to end (issue 40): a question asked while the chat view is hidden is seen — a badge on
// the Elelem icon of the activity bar, a status bar item and a notification whose "Open Chat"
// opens the chat at the question. Driven by Chromium's keyboard and mouse in code-server.
// Usage: node test/e2e/attention.mjs URL SCREENSHOT WORKSPACE.
import { chatFrame, check, openChat, runCase, send, step } from "./lib.mjs";

const [url, screenshot] = process.argv.slice(2);
const SIDEBAR = ".part.sidebar";
const ICON = '.activitybar .action-item:has(.action-label[aria-label^="Elelem"])';
const ITEM = ".statusbar-item:has-text('Elelem asks')";
const TOAST = ".notifications-toasts .notification-toast:has-text('Elelem asks:')";

await runCase("attention", screenshot, async (page) => {
  step(`open ${url}`);
  await page.goto(url);
  await page.waitForSelector(".monaco-workbench");
  await page.waitForTimeout(1500);
  let frame = await openChat(page);
  check((await page.locator(`${ICON} .badge .badge-content`).filter({ hasText: /\d/ }).count()) === 0, "a badge before any question");

  step("send a prompt whose execute call asks permission a few seconds later, then hide the side bar with Ctrl+B");
  // the stub waits 4 s, then calls execute (the default policy asks before execute)
  await send(frame, '!events [4000, {"type": "doing", "id": "c1", "name": "execute", "arguments": {"command": "echo asked while hidden"}}]');
  await page.locator(".part.editor").click({ position: { x: 200, y: 200 } });
  await page.keyboard.press("Control+b");
  await page.waitForSelector(SIDEBAR, { state: "hidden" });
  check((await frame.locator(".notice.ask.waiting").count()) === 0, "the question came before the side bar was hidden: raise the stub's wait");

  step("the question arrives: a badge on the Elelem icon, a status bar item, a notification with Open Chat");
  const badge = page.locator(`${ICON} .badge .badge-content`);
  await badge.filter({ hasText: "1" }).waitFor();
  const item = page.locator(ITEM);
  await item.waitFor();
  check(/Elelem asks/.test(await item.textContent()), `the status bar item: ${await item.textContent()}`);
  const toast = page.locator(TOAST);
  await toast.waitFor();
  check(/echo asked while hidden|execute|Allow/i.test(await toast.textContent()), `the notification: ${await toast.textContent()}`);
  check(await page.locator(SIDEBAR).isHidden(), "the side bar opened by itself");
  step(`screenshot ${screenshot}`);
  await page.screenshot({ path: screenshot });

  step("click Open Chat: the chat is in view with the question's buttons");
  await toast.locator(".monaco-button", { hasText: "Open Chat" }).click();
  await page.waitForSelector(SIDEBAR, { state: "visible" });
  frame = await chatFrame(page);
  const question = frame.locator(".notice.ask.waiting");
  await question.waitFor();
  const labels = await question.locator("button.ask-choice").allTextContents();
  check(["Allow", "Deny"].every((l) => labels.map((x) => x.trim()).includes(l)), `the question's buttons: ${JSON.stringify(labels)}`);
  check(await question.isVisible(), "the question is not in view");

  step("answer Allow with the mouse: the badge and the status bar item go");
  await question.locator('button.ask-choice[data-answer="allow"]').click();
  await frame.waitForSelector("details.tool.ok");
  check(/asked while hidden/.test(await frame.locator("details.tool.ok pre.result").last().textContent()), "the command's output");
  await page.locator(ITEM).waitFor({ state: "detached" });
  await page.waitForFunction((icon) => !/\d/.test(document.querySelector(`${icon} .badge`)?.textContent ?? ""), ICON);
  await frame.waitForSelector("body:not(.busy)");

  step("the status bar item alone opens the chat: a second question, the side bar hidden; Deny");
  await send(frame, '!events [4000, {"type": "doing", "id": "c2", "name": "execute", "arguments": {"command": "echo second"}}]');
  await page.locator(".part.editor").click({ position: { x: 200, y: 200 } });
  await page.keyboard.press("Control+b");
  await page.waitForSelector(SIDEBAR, { state: "hidden" });
  await page.locator(ITEM).waitFor();
  await page.locator(ITEM).click();
  await page.waitForSelector(SIDEBAR, { state: "visible" });
  frame = await chatFrame(page);
  await frame.locator(".notice.ask.waiting").waitFor();
  await frame.locator('.notice.ask.waiting button.ask-choice[data-answer="deny"]').click();
  await page.locator(ITEM).waitFor({ state: "detached" });
});
