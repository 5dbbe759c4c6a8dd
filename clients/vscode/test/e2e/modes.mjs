// End to end: the session's mode in the chat's header and the plan checklist, in real
// VS Code (code-server), issue 20. Usage: node test/e2e/modes.mjs URL SCREENSHOT WORKSPACE.
import { check, openChat, runCase, send, step, widenSidebar } from "./lib.mjs";

const [url, screenshot] = process.argv.slice(2);
const todo = (statuses) => `!tool todo ${JSON.stringify({
  todos: ["Read hello.py", "Write the plan", "Ask for approval"].map((content, i) => ({ content, status: statuses[i] })),
})}`;

await runCase("modes", screenshot, async (page) => {
  step(`open ${url}`);
  await page.goto(url);
  await page.waitForSelector(".monaco-workbench");
  await page.waitForTimeout(1500);
  const frame = await openChat(page);

  step("the header shows the mode; its picker switches to Plan (session/setMode)");
  await frame.waitForFunction(() => document.querySelector("#mode")?.textContent === "Mode: Build ▾");
  await frame.click("#mode");
  const plan = page.locator('.quick-input-list .monaco-list-row[aria-label^="Plan"]');
  await plan.first().waitFor();
  await plan.first().click();
  await frame.waitForFunction(() => document.querySelector("#mode")?.textContent === "Mode: Plan ▾");

  step("the todo tool's plan is a checklist, updated in place");
  await send(frame, todo(["completed", "in_progress", "pending"]));
  await frame.waitForFunction(() => document.querySelector(".plan .label")?.textContent === "Plan: 1 of 3 done");
  await frame.waitForSelector("#send:not([disabled])");
  await send(frame, todo(["completed", "completed", "in_progress"]));
  await frame.waitForFunction(() => document.querySelector(".plan .label")?.textContent === "Plan: 2 of 3 done");
  check((await frame.locator(".plan").count()) === 1, "more than one plan in the chat");
  const classes = await frame.$$eval(".plan li", (all) => all.map((li) => li.className));
  check(JSON.stringify(classes) === JSON.stringify(["entry completed", "entry completed", "entry in_progress"]), JSON.stringify(classes));
  await frame.waitForSelector("#send:not([disabled])");
  await widenSidebar(page, 160);
  await page.waitForTimeout(500);
  await frame.evaluate(() => document.querySelector(".plan").scrollIntoView({ block: "center" }));
  step(`screenshot ${screenshot}`);
  await page.screenshot({ path: screenshot });
});
