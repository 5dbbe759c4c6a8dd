// End to end: a failing MCP server in real VS Code (code-server), issue 31 items 5 and 6.
// Usage: node test/e2e/mcp.mjs URL SCREENSHOT WORKSPACE. The workspace's .vscode/settings.json
// (written by e2e.sh) names a server whose command does not exist, retried quickly.
import { check, openChat, runCase, runCommand, send, step } from "./lib.mjs";

const [url, screenshot] = process.argv.slice(2);

await runCase("mcp", screenshot, async (page) => {
  step(`open ${url}`);
  await page.goto(url);
  await page.waitForSelector(".monaco-workbench");
  await page.waitForTimeout(1500);
  const frame = await openChat(page);

  step("the server retries, then fails: one line in the chat, updated in place");
  await frame.waitForFunction(() => /broken failed/.test(document.querySelector("#mcp")?.textContent ?? ""), null, { timeout: 90_000 });
  await page.waitForTimeout(1000);
  let lines = (await frame.locator(".notice.mcp-notice").allTextContents()).filter((l) => l.includes("broken"));
  check(lines.length === 1 && /broken failed/.test(lines[0]), `the chat's MCP lines: ${JSON.stringify(lines)}`);

  step("a turn, then Undo Last Turn: the header still says failed, not starting…");
  await send(frame, "!echo hi there");
  await frame.waitForFunction(() => [...document.querySelectorAll(".markdown")].some((m) => m.textContent.includes("hi there")));
  await frame.waitForSelector("body:not(.busy)");
  await runCommand(page, "Elelem: Undo Last Turn");
  const dialog = page.locator(".monaco-dialog-box");
  await dialog.waitFor();
  await dialog.locator(".monaco-button").filter({ hasText: /^Restore$/ }).first().click();
  await frame.waitForFunction(() => [...document.querySelectorAll(".notice.info")].some((n) => /Rewound to before turn \d+/.test(n.textContent)));
  const header = await frame.textContent("#mcp");
  check(/broken failed/.test(header) && !/starting/.test(header), `the header after Undo: ${header}`);
  lines = (await frame.locator(".notice.mcp-notice").allTextContents()).filter((l) => l.includes("broken"));
  check(lines.length === 1, `the chat's MCP lines after Undo: ${JSON.stringify(lines)}`);
  await page.screenshot({ path: screenshot });
});
