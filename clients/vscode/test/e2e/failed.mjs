// End to end (issue 40): a failed tool call looks like a failure in real VS Code (code-server),
// driven by Chromium's keyboard and mouse: `list` of a missing path (exit 2, which the daemon
// once reported ok) and `execute` of `false` (exit 1) are red "error ✗ exit N" cards, not a
// green "ok"; `grep` finding nothing (exit 1, expected for grep) stays ok.
// Usage: node test/e2e/failed.mjs URL SCREENSHOT WORKSPACE.
import { approveIfAsked, check, openWorkbench, runCase, send, step } from "./lib.mjs";

const [url, screenshot] = process.argv.slice(2);

/** The last tool card once its call ended: its classes, status, exit note, colours and result. */
async function settled(frame, name) {
  const card = frame.locator(`details.tool:not(.running):has(> summary .name:text-is("${name}"))`).last();
  await card.waitFor();
  if (!(await card.evaluate((node) => node.open))) await card.locator("summary").click(); // the user opens it
  await card.locator("pre.result").waitFor();
  return card.evaluate((node) => ({
    classes: [...node.classList],
    status: node.querySelector(":scope > summary .status").textContent,
    exit: node.querySelector(":scope > summary .exit")?.textContent ?? null,
    colour: getComputedStyle(node.querySelector(":scope > summary .status")).color,
    result: node.querySelector("pre.result").textContent,
  }));
}

await runCase("failed", screenshot, async (page) => {
  const frame = await openWorkbench(page, url);

  step("grep that finds nothing (exit 1, expected for grep): a green ok");
  await send(frame, '!tool grep {"pattern":"nothing-matches-this-zzz"}');
  const grep = await settled(frame, "grep");
  check(grep.classes.includes("ok") && grep.status === "ok" && grep.exit === null, `grep finding nothing: ${JSON.stringify(grep)}`);

  step("list of a missing path (exit 2): red, error ✗ exit 2, not ok");
  await send(frame, '!tool list {"path":"no-such-folder"}');
  const list = await settled(frame, "list");
  check(list.classes.includes("error") && !list.classes.includes("ok"), `the list card's classes: ${list.classes}`);
  check(list.status === "error" && list.exit === "✗ exit 2", `the list card says ${JSON.stringify([list.status, list.exit])}`);
  check(list.colour !== grep.colour, `the failed list has the ok card's colour ${list.colour}`);
  check(/exit_status: 2/.test(list.result), `the list card's result: ${list.result}`);

  step("execute of false (exit 1, after Allow): red, error ✗ exit 1");
  await frame.waitForSelector("body:not(.busy)");
  await send(frame, '!tool execute {"command":"false"}');
  await approveIfAsked(page, frame.locator('details.tool:not(.running):has(> summary .name:text-is("execute"))'), frame);
  const execute = await settled(frame, "execute");
  check(execute.classes.includes("error") && !execute.classes.includes("ok"), `the execute card's classes: ${execute.classes}`);
  check(execute.status === "error" && execute.exit === "✗ exit 1", `the execute card says ${JSON.stringify([execute.status, execute.exit])}`);
  check(execute.colour === list.colour, "the failed execute is not red as the failed list is");
  await frame.waitForSelector("body:not(.busy)");
  step(`screenshot ${screenshot}`);
  await page.screenshot({ path: screenshot });
});
