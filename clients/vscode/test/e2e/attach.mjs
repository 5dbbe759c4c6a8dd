// End to end (issue 40): an attachment never breaks the window, in real VS Code (code-server)
// driven by Chromium's keyboard. The workspace holds big.txt (6,000 lines) and sets a
// 4,000-token window (elelem.env); outside.txt lies beside it, outside the working directory.
// An @-mention of ../outside.txt says nothing was attached; an @-mention of big.txt, picked from
// the @ list with Enter, says it was cut to fit ("lines 1–N of 6,000"), and nothing compacts.
// Usage: node test/e2e/attach.mjs URL SCREENSHOT WORKSPACE.
import { check, openWorkbench, runCase, step } from "./lib.mjs";

const [url, screenshot] = process.argv.slice(2);
const notices = (frame) => frame.evaluate(() => [...document.querySelectorAll("#log .notice")].map((n) => n.textContent.trim()));

await runCase("attach", screenshot, async (page) => {
  const frame = await openWorkbench(page, url);

  step("type a prompt that mentions @../outside.txt, Enter: the chat says it attaches nothing");
  await frame.click("#input");
  await page.keyboard.type("!echo compare @../outside.txt please", { delay: 30 });
  await frame.waitForFunction(() => document.querySelector("#input").value.endsWith("please"));
  await page.keyboard.press("Enter");
  await frame.waitForFunction(() => [...document.querySelectorAll("#log .turn.assistant")].some((n) => /compare/.test(n.textContent)));
  await frame.waitForSelector("body:not(.busy)");
  const outside = (await notices(frame)).filter((n) => /outside\.txt/.test(n));
  check(outside.length === 1 && /^@\.\.\/outside\.txt attaches nothing: it is outside the working directory$/.test(outside[0]), `the chat says ${JSON.stringify(outside)}`);
  check(!(await frame.textContent("#log")).includes("not in the project"), "outside.txt's text reached the chat");

  step("type @big, pick big.txt from the @ list with Enter, finish the sentence, Enter");
  await frame.click("#input");
  await page.keyboard.type("!echo explain @big", { delay: 30 });
  await frame.waitForFunction(() => /big\.txt$/.test(document.querySelector("#completions:not([hidden]) li.selected .label")?.textContent ?? ""));
  await page.keyboard.press("Enter");
  await frame.waitForFunction(() => document.querySelector("#input").value === "!echo explain @big.txt ");
  await page.keyboard.type("briefly", { delay: 30 });
  await page.keyboard.press("Enter");

  step("the chat says big.txt was cut to fit: lines 1–N of 6,000; nothing compacted");
  await frame.waitForFunction(() => [...document.querySelectorAll("#log .turn.assistant")].some((n) => /explain/.test(n.textContent)));
  await frame.waitForSelector("body:not(.busy)");
  const cut = (await notices(frame)).filter((n) => /big\.txt/.test(n));
  const shown = /^@big\.txt was cut to fit the model's window: lines 1–(\d+) of 6,000$/.exec(cut[0] ?? "");
  check(cut.length === 1 && shown && Number(shown[1]) >= 10 && Number(shown[1]) < 6000, `the chat says ${JSON.stringify(cut)}`);
  const compacted = (await notices(frame)).filter((n) => /compact/i.test(n));
  check(compacted.length === 0 && (await frame.locator(".notice.compacted").count()) === 0, `a compaction: ${JSON.stringify(compacted)}`);
  // what the model read (the stub echoes its prompt): the lines kept, and the same note
  const reply = await frame.evaluate(() => [...document.querySelectorAll(".turn.assistant")].at(-1).textContent);
  check(reply.includes(`cut: lines 1–${shown[1]} of 6,000; ask for more with read`), "the model's prompt lacks the cut note");
  check(reply.includes(`line ${shown[1]} of the big file`) && !reply.includes(`line ${Number(shown[1]) + 1} of the big file`), "the model read other lines than the note says");
  await frame.locator(".notice", { hasText: "was cut" }).scrollIntoViewIfNeeded();
  step(`screenshot ${screenshot}`);
  await page.screenshot({ path: screenshot });
});
