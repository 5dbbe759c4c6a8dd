// The chat view: one webview in the Elelem side bar container.
import * as crypto from "crypto";
import * as vscode from "vscode";
import type { Chat, ViewMessage } from "./chat";

export const VIEW_ID = "elelem.chat";

export function registerChatView(context: vscode.ExtensionContext, chat: Chat): void {
  const provider: vscode.WebviewViewProvider = {
    resolveWebviewView(view) {
      const media = vscode.Uri.joinPath(context.extensionUri, "media");
      const dist = vscode.Uri.joinPath(context.extensionUri, "dist");
      view.webview.options = { enableScripts: true, localResourceRoots: [media, dist] };
      view.webview.html = html(view.webview, media, dist);
      chat.attach({
        post: (message) => void view.webview.postMessage(message),
        visible: () => view.visible,
        badge: (count, tooltip) => {
          view.badge = count > 0 ? { value: count, tooltip } : undefined;
        },
      });
      view.webview.onDidReceiveMessage((message: ViewMessage) => chat.handle(message));
      view.onDidDispose(() => chat.attach(undefined));
    },
  };
  context.subscriptions.push(
    vscode.window.registerWebviewViewProvider(VIEW_ID, provider, {
      webviewOptions: { retainContextWhenHidden: true },
    }),
  );
}

function html(webview: vscode.Webview, media: vscode.Uri, dist: vscode.Uri): string {
  const nonce = crypto.randomBytes(16).toString("base64");
  const css = webview.asWebviewUri(vscode.Uri.joinPath(media, "main.css"));
  const js = webview.asWebviewUri(vscode.Uri.joinPath(dist, "webview.js"));
  const csp = [
    "default-src 'none'",
    `img-src ${webview.cspSource} data:`,
    `style-src ${webview.cspSource}`,
    `font-src ${webview.cspSource}`,
    `script-src 'nonce-${nonce}'`,
  ].join("; ");
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link href="${css}" rel="stylesheet">
<title>Elelem</title>
</head>
<body>
<header id="header"><span id="status">Not started: send a message to start the daemon.</span><button type="button" id="model" hidden></button><button type="button" id="mode" hidden></button><div id="meter" hidden></div><div id="mcp" hidden></div></header>
<main id="log" role="log" aria-live="polite"></main>
<form id="prompt">
  <ul id="completions" role="listbox" hidden></ul>
  <div id="chips" aria-label="Attachments"></div>
  <div id="attach">
    <button type="button" id="mention" title="Mention a file: type @ and pick from the list">@</button>
    <button type="button" data-attach="file" title="Attach the current file">+ File</button>
    <button type="button" data-attach="selection" title="Attach the selected code">+ Selection</button>
    <button type="button" data-attach="problems" title="Attach the current file's problems (diagnostics)">+ Problems</button>
    <span class="hint">paste or drop an image</span>
  </div>
  <textarea id="input" rows="3" placeholder="Ask elelem… (Enter to send, Shift+Enter for a new line, / for commands, @ for files, Esc to stop)" aria-label="Prompt"></textarea>
  <div id="buttons">
    <button type="submit" id="send" title="Send (Enter)">Send</button>
    <button type="button" id="stop" title="Stop the running turn" disabled>Stop</button>
    <button type="button" id="new" title="Start a new session">New Session</button>
  </div>
</form>
<script nonce="${nonce}" src="${js}"></script>
</body>
</html>`;
}
