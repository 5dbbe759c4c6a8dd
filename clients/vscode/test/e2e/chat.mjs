// End to end in real VS Code (code-server) with the packaged .vsix, driven by Playwright.
// Usage: node test/e2e/chat.mjs URL SCREENSHOT. Exits non-zero on the first failed step.
import { chromium } from "playwright-core";
import { CHROMIUM, STEP_TIMEOUT, approveIfAsked, chatFrame, check, dismissDialogs, inView, runCommand, send, step } from "./lib.mjs";

const [url, screenshot] = process.argv.slice(2);
async function main() {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
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
    const opened = Date.now();
    await runCommand(page, "Elelem: Open Chat");
    const frame = await chatFrame(page);
    const shown = Date.now();
    // elelem.prestart (the default): the session opened in the background; a figure, not a bound
    await frame.waitForFunction(() => /stub/.test(document.querySelector("#status")?.textContent ?? ""));
    step(`prestart: the chat view loaded ${shown - opened} ms after Open Chat, and showed its session ${Date.now() - shown} ms later`);

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
    step("the code block has syntax colours");
    const keyword = frame.locator(".markdown pre code.language-python .hljs-keyword").first();
    check((await keyword.textContent()) === "def", "no highlighted keyword in the Python block");
    const [kw, plain] = await frame.evaluate(() => {
      const code = document.querySelector(".markdown pre code.language-python");
      return [getComputedStyle(code.querySelector(".hljs-keyword")).color, getComputedStyle(code).color];
    });
    check(kw !== plain, `the keyword has the code's colour (${kw})`);

    step("send a prompt: the streamed reply renders as Markdown");
    await send(frame, '!echo Here is **Markdown** from the stub:\n\n```python\nprint("hello from elelem")\n```');
    await frame.waitForSelector(".markdown strong");
    check((await frame.textContent(".markdown strong")) === "Markdown", "bold text missing");
    await frame.waitForFunction(() =>
      [...document.querySelectorAll(".markdown pre code.language-python")].some((c) => c.textContent.includes("hello from elelem")));
    await frame.waitForSelector("#send:not([disabled])");
    const header = await frame.textContent("#status");
    check(/stub/.test(header), `the header shows no session: ${header}`);

    step("a slash command runs with one Enter; /tools output renders as Markdown");
    await frame.type("#input", "/too");
    // the list for what is typed now, not one for "/t" still on screen (a loaded machine)
    await frame.waitForFunction(() => document.querySelector("#completions:not([hidden]) li.selected .label")?.textContent === "/tools");
    await frame.press("#input", "Enter");
    await frame.waitForSelector(".command-output li strong");
    check((await frame.inputValue("#input")) === "", "the command line is still in the prompt box");
    check(!/\*\*read\*\*/.test(await frame.textContent(".command-output")), "raw Markdown in /tools");

    step("a provider error is printed once");
    await send(frame, "!fail the model is down");
    await frame.waitForSelector(".stop-reason.error");
    const failed = await frame.evaluate(() => [...document.querySelectorAll(".turn.assistant")].at(-1).textContent);
    check(failed.split("the model is down").length === 2, `the error is not printed once: ${failed}`);

    step("a tool call renders with its arguments and result");
    await send(frame, '!tool execute {"command":"echo hi"}');
    const tool = frame.locator("details.tool.ok").first();
    await approveIfAsked(page, tool);
    check((await tool.locator(".name").textContent()) === "execute", "tool name");
    check((await tool.locator(".args").textContent()).includes("echo hi"), "tool arguments");
    if (!(await tool.evaluate((card) => card.open))) await tool.locator("summary").click(); // a permission question opened it
    check(/hi/.test(await tool.locator("pre.result").textContent()), "tool result");
    await frame.waitForFunction(() => [...document.querySelectorAll(".markdown")].some((m) => m.textContent.includes("done.")));

    step("a diff block is coloured by line");
    await send(frame, "!echo The change:\n\n```diff\n--- a/hello.py\n+++ b/hello.py\n@@ -1,3 +1,3 @@\n def greet(name):\n-    return f\"hello, {name}\"\n+    return f\"Hello, {name}!\"\n```");
    await frame.waitForSelector(".markdown pre code.language-diff .line.add");
    check((await frame.locator(".markdown pre code.language-diff .line.del").count()) === 1, "the removed line");
    await frame.waitForSelector("#send:not([disabled])");

    step("press Stop during a running tool: its card says cancelled");
    await frame.waitForSelector("#send:not([disabled])");
    await send(frame, '!tool execute {"command":"sleep 30"}');
    await approveIfAsked(page, frame.locator("details.tool.running .notice.answer"));
    await frame.click("#stop");
    await frame.waitForSelector("details.tool.cancelled");
    check((await frame.textContent("details.tool.cancelled .status")) === "cancelled", "the stopped tool's status");
    check((await frame.locator("details.tool.running").count()) === 0, "a tool card still says running");
    await frame.waitForSelector("#send:not([disabled])");

    step("press Stop during a long turn: Stopped. is in view");
    await send(frame, "!stream 300 20");
    await frame.waitForFunction(() => [...document.querySelectorAll(".markdown")].some((m) => m.textContent.includes("tok5")));
    await frame.click("#stop");
    await frame.waitForSelector(".stop-reason.cancelled");
    await frame.waitForSelector("#send:not([disabled])");
    const streamed = await frame.evaluate(() => [...document.querySelectorAll(".turn.assistant")].at(-1)?.textContent ?? "");
    check(!streamed.includes("tok299"), "the long turn was not stopped");
    await page.waitForTimeout(300); // the last frame's render
    check(await inView(frame.locator(".stop-reason.cancelled").last()), "Stopped. is below the fold");

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

    step("reload the window: the conversation comes back from the stored session");
    const before = await frame.getAttribute("#status", "title");
    await runCommand(page, "Developer: Reload Window");
    await page.waitForSelector(".monaco-workbench");
    await page.waitForTimeout(1500);
    await dismissDialogs(page);
    await runCommand(page, "Elelem: Open Chat");
    const reloaded = await chatFrame(page);
    await reloaded.waitForFunction(() =>
      [...document.querySelectorAll(".turn.user")].some((u) => u.textContent.includes("hello.py:1-6")), null, { timeout: STEP_TIMEOUT });
    await reloaded.waitForFunction(() => [...document.querySelectorAll(".markdown")].some((m) => m.textContent.includes("tok5")));
    check((await reloaded.getAttribute("#status", "title")) === before, `another session after the reload: ${before}`);
    step("issue 40: the reloaded chat is scrolled to its end");
    await page.waitForTimeout(1000); // the redrawn replies' Markdown
    const [top, height, client] = await reloaded.evaluate(() => {
      const log = document.querySelector("#log");
      return [log.scrollTop, log.scrollHeight, log.clientHeight];
    });
    check(height > client && height - top - client < 40, `the reloaded chat is not at its end: scrollTop ${top} of ${height - client}`);
    check((await reloaded.locator(".notice.error").count()) === 0, await reloaded.textContent("#log"));
    await send(reloaded, "!echo after the reload");
    await reloaded.waitForFunction(() => [...document.querySelectorAll(".markdown")].some((m) => m.textContent.includes("after the reload")));
    check((await reloaded.getAttribute("#status", "title")) === before, "the next message went to another session");
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
