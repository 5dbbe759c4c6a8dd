// Helpers of the code-server end-to-end cases (chat.mjs, review.mjs, ...).
import { chromium } from "playwright-core";

export const CHROMIUM = process.env.ELELEM_CHROMIUM || "/usr/bin/chromium";
export const STEP_TIMEOUT = 60_000;

export function step(name) {
  console.log(`e2e: ${name}`);
}

export function check(condition, message) {
  if (!condition) throw new Error(message);
}

/** The chat webview's frame (VS Code nests it in two iframes). */
export async function chatFrame(page) {
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
export async function dismissDialogs(page) {
  for (let i = 0; i < 5; i++) {
    const close = page.locator(".monaco-dialog-box .dialog-close-action, .monaco-dialog-box .codicon-dialog-close");
    if ((await close.count()) === 0) return;
    await close.first().click().catch(() => page.keyboard.press("Escape"));
    await page.waitForTimeout(300);
  }
}

/** Run a command from the palette, retrying until the extension's contributions are loaded. */
export async function runCommand(page, title) {
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

/**
 * Wait for `done`; a daemon whose permission policy asks before `execute` asks in the chat
 * (elelem.askInChat): buttons in the tool call's card. Check that every option has a label
 * and a description (its tooltip), that no quick pick opened at the top of the window, then
 * click Allow with the mouse.
 */
export async function approveIfAsked(page, done, frame) {
  frame ??= await chatFrame(page);
  const deadline = Date.now() + STEP_TIMEOUT;
  while (Date.now() < deadline) {
    if (await done.count()) return;
    const question = frame.locator(".notice.ask.waiting").last();
    if (await question.count()) {
      const options = await question.locator("button.ask-choice").evaluateAll((all) => all.map((b) => [b.textContent.trim(), b.title]));
      step(`the daemon asks permission for execute, in the chat: ${options.map(([label]) => label).join(" / ")}: Allow`);
      const labels = options.map(([label]) => label);
      check(["Allow", "Deny", "Always allow", "Never allow"].every((l) => labels.includes(l)), `permission options: ${JSON.stringify(options)}`);
      check(options.every(([, description]) => description.length > 0), `an option without a description: ${JSON.stringify(options)}`);
      check(!(await page.locator(".quick-input-widget").isVisible()), "a quick pick opened at the top of the window as well");
      await question.locator('button.ask-choice[data-answer="allow"]').click();
    }
    await page.waitForTimeout(200);
  }
  throw new Error("the tool call never completed");
}

/** Whether the element is inside the visible part of the chat log (not below the fold). */
export function inView(locator) {
  return locator.evaluate((node) => {
    const box = document.querySelector("#log").getBoundingClientRect();
    const r = node.getBoundingClientRect();
    return r.height > 0 && r.top >= box.top - 1 && r.bottom <= box.bottom + 1;
  });
}

export async function send(frame, text) {
  // No turn may be running: while one runs, a message is a steer and a command is refused.
  await frame.waitForSelector("body:not(.busy)", { timeout: STEP_TIMEOUT });
  await frame.fill("#input", text);
  await frame.press("#input", "Enter");
}


/** A Chromium page on code-server. */
export async function openBrowser() {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.setDefaultTimeout(STEP_TIMEOUT);
  return { browser, page };
}

/** Open a file of the workspace with Ctrl+P. */
export async function openFile(page, name) {
  await dismissDialogs(page);
  await page.keyboard.press("Control+P");
  await page.waitForSelector(".quick-input-widget input");
  await page.keyboard.type(name);
  await page.locator(`.quick-input-list .monaco-list-row[aria-label*="${name}"]`).first().waitFor();
  await page.keyboard.press("Enter");
  await page.waitForSelector(".monaco-editor .view-lines");
}

/** Open the chat and wait for its session's header. */
export async function openChat(page) {
  await runCommand(page, "Elelem: Open Chat");
  const frame = await chatFrame(page);
  await frame.waitForFunction(() => /stub/.test(document.querySelector("#status")?.textContent ?? ""));
  return frame;
}

/** Open code-server at `url`, then the chat (the side bar widened by `widen`): the chat's frame. */
export async function openWorkbench(page, url, widen = 160) {
  step(`open ${url}`);
  await page.goto(url);
  await page.waitForSelector(".monaco-workbench");
  await page.waitForTimeout(1500);
  const frame = await openChat(page);
  await widenSidebar(page, widen);
  return frame;
}

/** Widen the side bar (for a screenshot). */
export async function widenSidebar(page, by = 200) {
  const bar = await page.locator(".part.sidebar").boundingBox();
  if (!bar) return;
  const y = bar.y + bar.height / 2;
  await page.mouse.move(bar.x + bar.width + 1, y);
  await page.mouse.down();
  await page.mouse.move(bar.x + bar.width + by, y, { steps: 5 });
  await page.mouse.up();
}

/** Run a case: its failure saves a screenshot and exits non-zero. */
export async function runCase(name, screenshot, body) {
  const { browser, page } = await openBrowser();
  try {
    await body(page);
    console.log(`e2e: ${name}: 1 passed, 0 failed`);
  } catch (error) {
    const failed = screenshot.replace(/\.png$/, "") + ".failed.png";
    await page.screenshot({ path: failed }).catch(() => undefined);
    console.error(`e2e: screenshot of the failure: ${failed}`);
    console.error(`e2e: ${name}: FAILED: ${error.stack || error}`);
    console.log(`e2e: ${name}: 0 passed, 1 failed`);
    process.exitCode = 1;
  } finally {
    await browser.close();
  }
}
