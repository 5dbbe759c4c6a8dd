// End to end (issue 40): the context meter in the chat's header, with its warning before
// auto-compaction, and the model picker from the header's button, in code-server through
// Chromium's mouse and keyboard. The workspace sets a 4,000-token window (elelem.env).
// Usage: node test/e2e/meter.mjs URL SCREENSHOT WORKSPACE.
import path from "path";
import { check, openWorkbench, runCase, send, step } from "./lib.mjs";

const [url, screenshot] = process.argv.slice(2);
// the counts a provider reports, scripted through the stub: 3,000 in (2,700 from the cache), 100 out
const usage = (text, input, read) =>
  `!events [{"type": "saying", "text": "${text}"}, {"type": "usage", "input_tokens": ${input}, "output_tokens": 100, "cache_read_tokens": ${read}}]`;

await runCase("meter", screenshot, async (page) => {
  const frame = await openWorkbench(page, url);

  step("a turn's usage: the header's meter says the window's share and the cache's");
  await send(frame, usage("A first answer.", 1000, 600));
  await frame.waitForSelector("#meter:not([hidden])");
  await frame.waitForFunction(() => /^ctx 1\.1k\/4\.0k 27% · 60% cached$/.test(document.querySelector("#meter").textContent));

  step("near the threshold: ⚠ auto-compacts at 85%, in view while the log scrolls");
  await frame.waitForSelector("body:not(.busy)");
  await send(frame, usage("The context is filling up.", 3000, 2700));
  await frame.waitForFunction(() => document.querySelector("#meter").textContent === "ctx 3.1k/4.0k 77% · 90% cached · ⚠ auto-compacts at 85%");
  check((await frame.locator("#meter.warn .meter-warning").count()) === 1, "the warning is not marked");
  await frame.evaluate(() => document.querySelector("#log").scrollTo(0, 0));
  const box = await frame.locator("#meter").boundingBox();
  check(box && box.height > 0 && box.y >= 0, `the meter is out of view: ${JSON.stringify(box)}`);
  await frame.evaluate(() => document.querySelector("#log").scrollTo(0, 1e6));
  step(`screenshot ${screenshot}`);
  await page.screenshot({ path: screenshot });

  step("the header's model button opens the picker: the daemon's providers; Enter on stub runs /provider stub");
  await frame.waitForSelector("body:not(.busy)");
  check((await frame.textContent("#model")) === "stub ▾", `the model button: ${await frame.textContent("#model")}`);
  await frame.click("#model");
  const rows = page.locator(".quick-input-list .monaco-list-row");
  await rows.first().waitFor();
  const labels = await rows.evaluateAll((all) => all.map((r) => r.getAttribute("aria-label")));
  check(labels.some((l) => /^stub/.test(l)) && labels.some((l) => /^openai/.test(l)), `the picker's rows: ${JSON.stringify(labels)}`);
  check(/now stub · stub/.test(await page.locator(".quick-input-widget").textContent()), "the picker's title names the current model");
  await page.screenshot({ path: path.join(path.dirname(screenshot), "model.png") });
  await page.keyboard.type("stub");
  await page.locator('.quick-input-list .monaco-list-row[aria-label^="stub"]').first().waitFor();
  await page.keyboard.press("Enter");
  await frame.waitForFunction(() => [...document.querySelectorAll(".turn.user.command")].some((n) => n.textContent === "/provider stub"));
  await frame.waitForFunction(() => /switched to stub/.test(document.querySelector(".command-output:last-of-type")?.textContent ?? ""));

  step("Elelem: Pick Model is in the command palette too");
  await frame.waitForSelector("body:not(.busy)");
  await page.keyboard.press("F1");
  await page.waitForSelector(".quick-input-widget input");
  await page.keyboard.type("Elelem: Pick Model");
  await page.locator('.quick-input-list .monaco-list-row[aria-label^="Elelem: Pick Model"]').first().waitFor();
  await page.keyboard.press("Enter");
  await page.locator('.quick-input-list .monaco-list-row[aria-label^="openai"]').first().waitFor();
  await page.keyboard.press("Escape");
  check((await frame.locator(".notice.error").count()) === 0, await frame.textContent("#log"));
});
