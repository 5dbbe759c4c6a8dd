// Markdown to HTML for the chat, safe for the webview: raw HTML is escaped (html: false),
// markdown-it refuses javascript:/vbscript:/file: links, and images become plain links so a
// reply can never make the webview load a remote resource. Fenced code is coloured by
// media/highlight.js (escaped by it, classes only); a diff is coloured by line.
import MarkdownIt from "markdown-it";
import { diffHtml, highlight, isDiff } from "./highlight.js";

const md = new MarkdownIt({
  html: false,
  linkify: true,
  breaks: false,
  highlight: (code, lang) => (isDiff(lang) ? diffHtml(code, md.utils.escapeHtml) : highlight(code, lang)),
});

md.renderer.rules.image = (tokens, index, options, env, self) => {
  const token = tokens[index];
  const src = token.attrGet("src") || "";
  const alt = self.renderInlineAsText(token.children || [], options, env) || src;
  return `<a href="${md.utils.escapeHtml(src)}" class="image-link">🖼 ${md.utils.escapeHtml(alt)}</a>`;
};

const fence = md.renderer.rules.fence;
md.renderer.rules.fence = (tokens, index, options, env, self) =>
  `<div class="code"><button type="button" class="copy" title="Copy">Copy</button>${fence(tokens, index, options, env, self)}</div>`;

export function render(text) {
  return md.render(text);
}

/**
 * A slash command's output. The daemon does not say whether it is Markdown (`/tools` is,
 * `/help` is aligned plain text), so it is rendered as Markdown, safely, with its line
 * breaks and spacing kept (main.css); output that is JSON (`/context json`) is a JSON block.
 */
export function renderOutput(text) {
  const trimmed = text.trim();
  if (/^[[{]/.test(trimmed)) {
    try {
      JSON.parse(trimmed);
      const ticks = Math.max(3, ...[...trimmed.matchAll(/`+/g)].map((m) => m[0].length + 1));
      const fenceMark = "`".repeat(ticks);
      return md.render(`${fenceMark}json\n${trimmed}\n${fenceMark}\n`);
    } catch {
      // not JSON: Markdown
    }
  }
  return md.render(text);
}
