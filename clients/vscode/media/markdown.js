// Markdown to HTML for the chat, safe for the webview: raw HTML is escaped (html: false),
// markdown-it refuses javascript:/vbscript:/file: links, and images become plain links so a
// reply can never make the webview load a remote resource.
import MarkdownIt from "markdown-it";

const md = new MarkdownIt({ html: false, linkify: true, breaks: false });

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
