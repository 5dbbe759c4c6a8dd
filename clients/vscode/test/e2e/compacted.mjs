// End to end (issue 40): the whole conversation survives a compaction for the user, in real
// VS Code (code-server) driven by Chromium's keyboard: three turns, /compact, one more turn,
// Developer: Reload Window: every prompt is in the chat again, in order, with the "compacted
// here" marker between the third and the fourth (once, only the summary came back), and the
// summary the model reads folded into that marker, not drawn as a prompt the user typed.
// Usage: node test/e2e/compacted.mjs URL SCREENSHOT WORKSPACE.
import { chatFrame, check, dismissDialogs, openWorkbench, runCase, runCommand, send, step } from "./lib.mjs";

const [url, screenshot] = process.argv.slice(2);
const PROMPTS = ["!echo the first answer", "!echo the second answer", "!echo the third answer"];
const AFTER = "!echo the answer after the compaction";

/** The chat's user prompts and compaction markers, top to bottom. */
const drawn = (frame) =>
  frame.evaluate(() =>
    [...document.querySelectorAll("#log .turn.user, #log .notice.compacted")].map((n) =>
      n.classList.contains("compacted") ? "--compacted--" : n.textContent.trim()));

await runCase("compacted", screenshot, async (page) => {
  const frame = await openWorkbench(page, url);

  step("three turns");
  for (const prompt of PROMPTS) {
    await send(frame, prompt);
    const answer = prompt.replace("!echo ", "");
    await frame.waitForFunction((a) => [...document.querySelectorAll(".markdown")].some((m) => m.textContent.includes(a)), answer);
  }

  step("/compact, typed and run with Enter");
  await frame.waitForSelector("body:not(.busy)");
  await frame.type("#input", "/compact", { delay: 40 });
  await frame.waitForFunction(() => document.querySelector("#completions:not([hidden]) li.selected .label")?.textContent === "/compact");
  await frame.press("#input", "Enter");
  await frame.waitForFunction(() => [...document.querySelectorAll(".turn.user.command")].some((n) => n.textContent === "/compact"));
  await frame.waitForSelector("body:not(.busy)");

  step("one more turn after the compaction");
  await send(frame, AFTER);
  await frame.waitForFunction(() => [...document.querySelectorAll(".markdown")].some((m) => m.textContent.includes("the answer after the compaction")));
  await frame.waitForSelector("body:not(.busy)");
  const session = await frame.getAttribute("#status", "title");

  step("Developer: Reload Window, then Elelem: Open Chat");
  await runCommand(page, "Developer: Reload Window");
  await page.waitForSelector(".monaco-workbench");
  await page.waitForTimeout(1500);
  await dismissDialogs(page);
  await runCommand(page, "Elelem: Open Chat");
  const reloaded = await chatFrame(page);
  await reloaded.waitForFunction(() => [...document.querySelectorAll(".markdown")].some((m) => m.textContent.includes("the answer after the compaction")));
  check((await reloaded.getAttribute("#status", "title")) === session, "the reloaded chat shows another session");

  step("every prompt is in the chat, in order, with the compaction marker before the last one");
  const want = [...PROMPTS, "--compacted--", AFTER];
  const deadline = Date.now() + 20_000;
  let shown = await drawn(reloaded);
  while (JSON.stringify(shown) !== JSON.stringify(want) && Date.now() < deadline) {
    await page.waitForTimeout(250);
    shown = await drawn(reloaded);
  }
  check(JSON.stringify(shown) === JSON.stringify(want), `after the reload the chat shows ${JSON.stringify(shown)}, not ${JSON.stringify(want)}`);
  for (const answer of ["the first answer", "the second answer", "the third answer"]) {
    check(await reloaded.evaluate((a) => [...document.querySelectorAll(".markdown")].some((m) => m.textContent.includes(a)), answer), `the reply "${answer}" is gone after the reload`);
  }
  check((await reloaded.locator(".notice.error").count()) === 0, await reloaded.textContent("#log"));

  step("the summary the model reads is folded into the marker (no prompt the user never typed); a click opens it");
  const summary = reloaded.locator(".notice.compacted details.summary");
  check((await summary.count()) === 1 && !(await summary.evaluate((d) => d.open)), "the summary is not one folded line in the marker");
  await summary.locator("summary").click();
  await summary.locator(".body").waitFor();
  check(/^Context: /.test(await summary.locator(".body").textContent()), `the summary: ${await summary.locator(".body").textContent()}`);
  await reloaded.evaluate(() => document.querySelector(".notice.compacted").scrollIntoView({ block: "center" }));
  step(`screenshot ${screenshot}`);
  await page.screenshot({ path: screenshot });
});
