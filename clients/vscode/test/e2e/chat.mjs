// End to end in real VS Code (code-server) with the packaged .vsix, driven by Playwright.
// Usage: node test/e2e/chat.mjs URL SCREENSHOT. Exits non-zero on the first failed step.
import { chromium } from "playwright-core";

const [url, screenshot] = process.argv.slice(2);
const CHROMIUM = process.env.ELELEM_CHROMIUM || "/usr/bin/chromium";
const STEP_TIMEOUT = 60_000;

function step(name) {
  console.log(`e2e: ${name}`);
}

function check(condition, message) {
  if (!condition) throw new Error(message);
}

/** The chat webview's frame (VS Code nests it in two iframes). */
async function chatFrame(page) {
  const deadline = Date.now() + STEP_TIMEOUT;
  while (Date.now() < deadline) {
    for (const frame of page.frames()) {
      try {
        if (await frame.$("#input")) return frame;
      } catch {
        // a frame that went away while we looked
      }
    }
    await page.waitForTimeout(250);
  }
  throw new Error("the chat webview never appeared");
}

/** Close what VS Code pops up on a first start (a sign-in dialog for its built-in chat). */
async function dismissDialogs(page) {
  for (let i = 0; i < 5; i++) {
    const close = page.locator(".monaco-dialog-box .dialog-close-action, .monaco-dialog-box .codicon-dialog-close");
    if ((await close.count()) === 0) return;
    await close.first().click().catch(() => page.keyboard.press("Escape"));
    await page.waitForTimeout(300);
  }
}

/** Run a command from the palette, retrying until the extension's contributions are loaded. */
async function runCommand(page, title) {
  const deadline = Date.now() + STEP_TIMEOUT;
  while (Date.now() < deadline) {
    await dismissDialogs(page);
    await page.keyboard.press("F1");
    await page.waitForSelector(".quick-input-widget input");
    await page.keyboard.type(title);
    const row = page.locator(`.quick-input-list .monaco-list-row[aria-label^="${title}"]`);
    try {
      await row.first().waitFor({ timeout: 3000 });
      await row.first().click();
      return;
    } catch {
      await page.keyboard.press("Escape");
      await page.waitForTimeout(1000);
    }
  }
  throw new Error(`the command palette never offered ${title}`);
}

/** Wait for `done`; a daemon whose permission policy asks before `execute` shows a quick pick: allow. */
async function approveIfAsked(page, done) {
  const allow = page.locator('.quick-input-widget .monaco-list-row[aria-label*="Allow"]').first();
  const deadline = Date.now() + STEP_TIMEOUT;
  while (Date.now() < deadline) {
    if (await done.count()) return;
    if (await allow.isVisible().catch(() => false)) {
      step("the daemon asks permission for execute: Allow");
      await allow.click();
    }
    await page.waitForTimeout(200);
  }
  throw new Error("the tool call never completed");
}

async function send(frame, text) {
  await frame.waitForSelector("#send:not([disabled])", { timeout: STEP_TIMEOUT });
  await frame.fill("#input", text);
  await frame.press("#input", "Enter");
}

async function main() {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  const page = await browser.newPage({ viewport: { width: 1280, height: 760 } });
  try {
    page.setDefaultTimeout(STEP_TIMEOUT);
    step(`open ${url}`);
    await page.goto(url);
    await page.waitForSelector(".monaco-workbench");

    step("open hello.py");
    await page.waitForTimeout(1500); // the workbench keeps restoring for a moment
    await dismissDialogs(page);
    await page.keyboard.press("Control+P");
    await page.waitForSelector(".quick-input-widget input");
    await page.keyboard.type("hello.py");
    await page.locator('.quick-input-list .monaco-list-row[aria-label*="hello.py"]').first().waitFor();
    await page.keyboard.press("Enter");
    await page.waitForSelector(".monaco-editor .view-lines");

    step("run Elelem: Open Chat from the command palette");
    await page.waitForTimeout(2000); // the workbench keeps restoring for a moment
    await runCommand(page, "Elelem: Open Chat");
    const frame = await chatFrame(page);

    step("Ask About Selection sends the selected code with its file and lines");
    await page.click(".monaco-editor .view-lines");
    await page.keyboard.press("Control+A");
    await runCommand(page, "Elelem: Ask About Selection");
    // wait for this input box itself: the palette's closing widget matches a bare selector
    await page.locator(".quick-input-widget", { hasText: "Ask elelem about the selection" }).waitFor();
    await page.keyboard.type("!echo You asked about");
    await page.keyboard.press("Enter");
    await frame.waitForFunction(() =>
      [...document.querySelectorAll(".turn.user")].some((u) => u.textContent.includes("hello.py:1-6")));
    await frame.waitForFunction(() =>
      [...document.querySelectorAll(".markdown pre code.language-python")].some((c) => c.textContent.includes("def greet")));
    await frame.waitForSelector("#send:not([disabled])");

    step("send a prompt: the streamed reply renders as Markdown");
    await send(frame, '!echo Here is **Markdown** from the stub:\n\n```python\nprint("hello from elelem")\n```');
    await frame.waitForSelector(".markdown strong");
    check((await frame.textContent(".markdown strong")) === "Markdown", "bold text missing");
    await frame.waitForFunction(() =>
      [...document.querySelectorAll(".markdown pre code.language-python")].some((c) => c.textContent.includes("hello from elelem")));
    await frame.waitForSelector("#send:not([disabled])");
    const header = await frame.textContent("#status");
    check(/stub/.test(header), `the header shows no session: ${header}`);

    step("a tool call renders with its arguments and result");
    await send(frame, '!tool execute {"command":"echo hi"}');
    const tool = frame.locator("details.tool.ok").first();
    await approveIfAsked(page, tool);
    check((await tool.locator(".name").textContent()) === "execute", "tool name");
    check((await tool.locator(".args").textContent()).includes("echo hi"), "tool arguments");
    if (!(await tool.evaluate((card) => card.open))) await tool.locator("summary").click(); // a permission question opened it
    check(/hi/.test(await tool.locator("pre.result").textContent()), "tool result");
    await frame.waitForFunction(() => [...document.querySelectorAll(".markdown")].some((m) => m.textContent.includes("done.")));

    step("press Stop during a long turn");
    await frame.waitForSelector("#send:not([disabled])");
    await send(frame, "!stream 300 20");
    await frame.waitForFunction(() => [...document.querySelectorAll(".markdown")].some((m) => m.textContent.includes("tok5")));
    await frame.click("#stop");
    await frame.waitForSelector(".stop-reason.cancelled");
    await frame.waitForSelector("#send:not([disabled])");
    const streamed = await frame.evaluate(() => [...document.querySelectorAll(".turn.assistant")].at(-1)?.textContent ?? "");
    check(!streamed.includes("tok299"), "the long turn was not stopped");

    step("slash-command completion");
    await frame.type("#input", "/he");
    await frame.waitForSelector("#completions:not([hidden]) li");
    check((await frame.textContent("#completions li.selected .label")) === "/help", "completion");
    await frame.press("#input", "Escape");
    await frame.fill("#input", "");

    step("widen the side bar for the screenshot");
    const bar = await page.locator(".part.sidebar").boundingBox();
    if (bar) {
      const y = bar.y + bar.height / 2;
      await page.mouse.move(bar.x + bar.width + 1, y);
      await page.mouse.down();
      await page.mouse.move(bar.x + bar.width + 200, y, { steps: 5 });
      await page.mouse.up();
    }

    step(`screenshot ${screenshot}`);
    await frame.evaluate(() => document.querySelector("#log").scrollTo(0, 1e6));
    await page.screenshot({ path: screenshot });
    console.log("e2e: 1 passed, 0 failed");
  } catch (error) {
    const failed = screenshot.replace(/\.png$/, "") + ".failed.png";
    await page.screenshot({ path: failed }).catch(() => undefined);
    console.error(`e2e: screenshot of the failure: ${failed}`);
    throw error;
  } finally {
    await browser.close();
  }
}

main().catch((error) => {
  console.error(`e2e: FAILED: ${error.stack || error}`);
  console.log("e2e: 0 passed, 1 failed");
  process.exit(1);
});
