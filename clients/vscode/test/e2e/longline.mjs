// End to end (issue 40): a long unbroken line (a hash, a URL, a path) wraps inside its bubble
// in real VS Code (code-server), driven by Chromium's keyboard: the chat log never scrolls
// sideways, for the user's prompt nor for the reply.
// Usage: node test/e2e/longline.mjs URL SCREENSHOT WORKSPACE.
import { check, openChat, runCase, step } from "./lib.mjs";

const [url, screenshot] = process.argv.slice(2);
const LONG = "0123456789abcdef".repeat(25) + "/the/end/of/the/long/line";

await runCase("longline", screenshot, async (page) => {
  step(`open ${url}`);
  await page.goto(url);
  await page.waitForSelector(".monaco-workbench");
  await page.waitForTimeout(1500);
  const frame = await openChat(page);

  step("type a prompt with a 425-character unbroken word, Enter");
  await frame.click("#input");
  await page.keyboard.type("!echo ", { delay: 30 });
  await page.keyboard.insertText(LONG); // pasted, as a user pastes a hash
  await page.keyboard.press("Enter");
  await frame.waitForFunction((end) => [...document.querySelectorAll(".turn.assistant .markdown")].some((m) => m.textContent.includes(end)), "/the/end/of/the/long/line");
  await frame.waitForSelector("body:not(.busy)");

  step("the log has no horizontal scrollbar; each bubble is as wide as the log, and the word wrapped");
  const sizes = await frame.evaluate(() => {
    const log = document.querySelector("#log");
    const user = [...document.querySelectorAll(".turn.user")].at(-1);
    const reply = [...document.querySelectorAll(".turn.assistant .markdown")].at(-1);
    const line = (n) => parseFloat(getComputedStyle(n).lineHeight) || 16;
    return {
      log: [log.scrollWidth, log.clientWidth],
      user: [user.scrollWidth, user.clientWidth, user.getBoundingClientRect().right, user.getBoundingClientRect().height / line(user)],
      reply: [reply.scrollWidth, reply.clientWidth, reply.getBoundingClientRect().right, reply.getBoundingClientRect().height / line(reply)],
      right: log.getBoundingClientRect().right,
    };
  });
  check(sizes.log[0] <= sizes.log[1], `the log scrolls sideways: scrollWidth ${sizes.log[0]} > clientWidth ${sizes.log[1]}`);
  for (const which of ["user", "reply"]) {
    const [scroll, client, right, lines] = sizes[which];
    check(scroll <= client && right <= sizes.right + 1, `the ${which} bubble overflows: ${JSON.stringify(sizes[which])}, the log ends at ${sizes.right}`);
    check(lines >= 2, `the ${which} bubble did not wrap the long word: ${JSON.stringify(sizes[which])}`);
  }
  step(`screenshot ${screenshot}`);
  await page.screenshot({ path: screenshot });
});
