// End to end (issue 40): the model that answers is the model shown, in real VS Code
// (code-server) driven by Chromium's keyboard. A local OpenAI-compatible server on 127.0.0.1
// (started here) answers as a llama.cpp server does: whatever model is asked for (gpt-4o),
// its stream names the one it serves (SmolLM2-135M). After a turn, the chat's header and its
// model button name SmolLM2-135M, not gpt-4o.
// Usage: node test/e2e/served.mjs URL SCREENSHOT WORKSPACE (the workspace's settings are written here).
import * as fs from "fs";
import * as http from "http";
import * as path from "path";
import { chatFrame, check, runCase, runCommand, send, step, widenSidebar } from "./lib.mjs";

const [url, screenshot, workspace] = process.argv.slice(2);
const SERVED = "SmolLM2-135M";
const asked = [];

const server = http.createServer((req, res) => {
  if (req.method === "GET") {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ object: "list", data: [{ id: SERVED, object: "model", owned_by: "llamacpp" }] }));
    return;
  }
  let body = "";
  req.on("data", (chunk) => { body += chunk; });
  req.on("end", () => {
    try { asked.push(JSON.parse(body).model); } catch { asked.push(undefined); }
    res.writeHead(200, { "content-type": "text/event-stream" });
    const chunk = (delta, finish, usage) =>
      `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 0, model: SERVED, choices: [{ index: 0, delta, finish_reason: finish }], ...(usage ? { usage } : {}) })}\n\n`;
    res.write(chunk({ role: "assistant", content: "hello from the local server" }, null));
    res.write(chunk({}, "stop", { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 }));
    res.end("data: [DONE]\n\n");
  });
});
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const base = `http://127.0.0.1:${server.address().port}/v1`;
fs.mkdirSync(path.join(workspace, ".vscode"), { recursive: true });
fs.writeFileSync(path.join(workspace, ".vscode", "settings.json"), JSON.stringify({
  "elelem.provider": "openai",
  "elelem.env": { OPENAI_BASE_URL: base, OPENAI_API_KEY: "sk-local", OPENAI_MODEL: "gpt-4o" },
}, null, 2));

try {
  await runCase("served", screenshot, async (page) => {
    step(`open ${url} (the openai provider at ${base}, asked for gpt-4o)`);
    await page.goto(url);
    await page.waitForSelector(".monaco-workbench");
    await page.waitForTimeout(1500);
    await runCommand(page, "Elelem: Open Chat");
    const frame = await chatFrame(page);
    await frame.waitForFunction(() => /^openai · /.test(document.querySelector("#status")?.textContent ?? ""));
    await widenSidebar(page, 160);

    step("a turn: the server answers, naming the model it serves");
    await send(frame, "hi");
    await frame.waitForFunction(() => [...document.querySelectorAll(".markdown")].some((m) => m.textContent.includes("hello from the local server")));
    await frame.waitForSelector("body:not(.busy)");
    check(asked.includes("gpt-4o"), `the daemon asked the server for ${JSON.stringify(asked)}, not gpt-4o`);

    step(`the header and the model button name ${SERVED}, not gpt-4o`);
    const shown = async () => [await frame.textContent("#status"), await frame.textContent("#model")];
    const deadline = Date.now() + 10_000;
    let [header, button] = await shown();
    while (!(header.startsWith(`openai · ${SERVED} · `) && button === `${SERVED} ▾`) && Date.now() < deadline) {
      await page.waitForTimeout(200);
      [header, button] = await shown();
    }
    check(header.startsWith(`openai · ${SERVED} · `), `the header says ${JSON.stringify(header)}`);
    check(button === `${SERVED} ▾`, `the model button says ${JSON.stringify(button)}`);
    check(!/gpt-4o/.test(header + button), `gpt-4o is still shown: ${header} / ${button}`);
    check((await frame.locator(".notice.error").count()) === 0, await frame.textContent("#log"));
    step(`screenshot ${screenshot}`);
    await page.screenshot({ path: screenshot });
  });
} finally {
  server.close();
  server.closeAllConnections?.();
}
