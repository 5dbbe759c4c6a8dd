// End to end: the editor's context in real VS Code (code-server), issue 21: a file with @,
// the selection, the problems and a pasted image, as the model receives them.
// Usage: node test/e2e/context.mjs URL SCREENSHOT WORKSPACE. The workspace holds app.py,
// bad.json (a trailing comma: VS Code's JSON support reports it) and .vscode/settings.json
// (the stub's `vision` model, which takes images), written by e2e.sh.
import { check, openChat, openFile, runCase, send, step, widenSidebar } from "./lib.mjs";

const [url, screenshot] = process.argv.slice(2);

await runCase("context", screenshot, async (page) => {
  step(`open ${url}`);
  await page.goto(url);
  await page.waitForSelector(".monaco-workbench");
  await page.waitForTimeout(1500);
  await openFile(page, "bad.json");
  await page.waitForTimeout(1000);
  const frame = await openChat(page);

  step("+ Problems attaches bad.json's problem (once VS Code's JSON support reported it)");
  const chips = frame.locator("#chips .chip");
  const deadline = Date.now() + 60_000;
  while ((await frame.locator("#chips .chip.diagnostics").count()) === 0) {
    check(Date.now() < deadline, "no problem was ever attached");
    await frame.click('#attach button[data-attach="problems"]');
    await page.waitForTimeout(1000);
  }
  check(/1 problem in bad\.json/.test(await chips.first().textContent()), await chips.first().textContent());

  step("+ Selection attaches the selected lines");
  await page.click(".editor-instance .monaco-editor .view-lines");
  await page.keyboard.press("Control+A");
  await frame.click('#attach button[data-attach="selection"]');
  await frame.waitForSelector("#chips .chip.selection");
  check(/bad\.json:1-3/.test(await frame.textContent("#chips .chip.selection")), await frame.textContent("#chips .chip.selection"));

  step("a pasted image becomes an image chip");
  await frame.evaluate(async () => {
    const canvas = document.createElement("canvas");
    canvas.width = 48;
    canvas.height = 32;
    const g = canvas.getContext("2d");
    g.fillStyle = "#3b82f6";
    g.fillRect(0, 0, 48, 32);
    g.fillStyle = "#facc15";
    g.fillRect(8, 8, 16, 16);
    const blob = await new Promise((resolve) => canvas.toBlob(resolve, "image/png"));
    const transfer = new DataTransfer();
    transfer.items.add(new File([blob], "screen.png", { type: "image/png" }));
    document.querySelector("#input").dispatchEvent(new ClipboardEvent("paste", { clipboardData: transfer, bubbles: true, cancelable: true }));
  });
  await frame.waitForSelector("#chips .chip.image img");

  step("@ opens the file picker (session/complete); Enter picks app.py");
  await frame.click("#input");
  await frame.type("#input", "explain @ap");
  await frame.waitForFunction(() => [...document.querySelectorAll("#completions:not([hidden]) li")].some((li) => li.textContent.includes("@app.py")));
  await frame.press("#input", "Enter");
  check((await frame.inputValue("#input")) === "explain @app.py ", `the prompt: ${await frame.inputValue("#input")}`);
  await frame.type("#input", "and the problem");
  await widenSidebar(page, 160);
  await page.waitForTimeout(500);
  step(`screenshot ${screenshot}`);
  await page.screenshot({ path: screenshot });

  step("send: the user message shows its chips; the model got every attachment");
  await frame.press("#input", "Enter");
  await frame.waitForSelector(".turn.user .chips.sent");
  check((await frame.locator(".turn.user .chips.sent .chip").count()) === 3, "the sent message's chips");
  check((await chips.count()) === 0, "the chips stayed in the prompt box");
  await frame.waitForSelector(".turn.user[data-turn-id]"); // marked when the turn ended
  check((await frame.locator(".notice.error").count()) === 0, await frame.textContent("#log"));
  await send(frame, "/context json"); // the messages as JSON: quotes inside are \"
  await frame.waitForSelector(".command-output");
  const context = (await frame.textContent(".command-output")).replace(/\\"/g, '"');
  for (const want of ['type="file" path="app.py"', 'type="selection" path="bad.json" lines="1-3"', 'type="diagnostics" path="bad.json"', "Trailing comma", '"type": "image"']) {
    check(context.includes(want), `the model's message lacks ${want}:\n${context.slice(0, 3000)}`);
  }
});
