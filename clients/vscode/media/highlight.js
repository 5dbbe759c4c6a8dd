// Syntax colours for the chat's code blocks, bundled into the webview (no CDN, no inline
// styles: the CSP stays `style-src` the extension only). highlight.js escapes the code it
// colours and emits class names only; media/main.css maps them to the theme's colours.
// A diff is coloured by line instead (added, removed, hunk, header), here and in the
// permission question and tool results.
import hljs from "highlight.js/lib/core";
import bash from "highlight.js/lib/languages/bash";
import c from "highlight.js/lib/languages/c";
import cpp from "highlight.js/lib/languages/cpp";
import css from "highlight.js/lib/languages/css";
import go from "highlight.js/lib/languages/go";
import ini from "highlight.js/lib/languages/ini";
import java from "highlight.js/lib/languages/java";
import javascript from "highlight.js/lib/languages/javascript";
import json from "highlight.js/lib/languages/json";
import lua from "highlight.js/lib/languages/lua";
import markdown from "highlight.js/lib/languages/markdown";
import python from "highlight.js/lib/languages/python";
import ruby from "highlight.js/lib/languages/ruby";
import rust from "highlight.js/lib/languages/rust";
import shell from "highlight.js/lib/languages/shell";
import sql from "highlight.js/lib/languages/sql";
import typescript from "highlight.js/lib/languages/typescript";
import xml from "highlight.js/lib/languages/xml";
import yaml from "highlight.js/lib/languages/yaml";

const LANGUAGES = { bash, c, cpp, css, go, ini, java, javascript, json, lua, markdown, python, ruby, rust, shell, sql, typescript, xml, yaml };
for (const [name, language] of Object.entries(LANGUAGES)) hljs.registerLanguage(name, language);

/** Code longer than this is shown uncoloured: colouring must never stall the webview. */
const MAX_CHARS = 100_000;

const DIFF = new Set(["diff", "patch", "udiff"]);

export function isDiff(lang) {
  return DIFF.has(String(lang).toLowerCase());
}

/** The kind of one diff line: add, del, hunk, meta, or "" for context. */
export function diffLineKind(line) {
  if (/^(\+\+\+ |--- |diff |index |new file|deleted file|similarity|rename )/.test(line)) return "meta";
  if (line.startsWith("@@")) return "hunk";
  if (line.startsWith("+")) return "add";
  if (line.startsWith("-")) return "del";
  return "";
}

function lines(text) {
  const all = text.split("\n");
  if (all.at(-1) === "") all.pop();
  return all;
}

/** HTML for a diff: one block span per line, classed by kind. `escape` escapes text. */
export function diffHtml(text, escape) {
  return lines(text)
    .map((line) => `<span class="line ${diffLineKind(line)}">${escape(line)}\n</span>`)
    .join("");
}

/** The same as DOM nodes (for text that never goes through innerHTML). */
export function diffNodes(text) {
  return lines(text).map((line) => {
    const span = document.createElement("span");
    span.className = `line ${diffLineKind(line)}`;
    span.textContent = `${line}\n`;
    return span;
  });
}

/** Coloured, escaped HTML for `code` in `lang`, or "" when the language is unknown. */
export function highlight(code, lang) {
  const name = String(lang || "").toLowerCase();
  if (!name || code.length > MAX_CHARS || !hljs.getLanguage(name)) return "";
  try {
    return hljs.highlight(code, { language: name, ignoreIllegals: true }).value;
  } catch {
    return "";
  }
}
