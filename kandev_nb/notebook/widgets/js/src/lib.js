// kandev_nb client library: Markdown (marked) + code highlighting (highlight.js core with a
// few common languages), and the streaming renderer used by StreamText views.
//
// Loaded ONCE per kernel by the KandevLib anywidget (its _esm); it publishes itself as
// globalThis.__kandevNb. Per-segment widgets carry only a tiny loader (see
// ../assets/stream_text.js) that waits for this object, so the ~100 KB of library code is
// not resent for every text segment of every turn.
//
// Safety: raw HTML in the agent's Markdown is shown as text (like markdown-it with
// html=False on the Python side), link URLs are limited to http(s), mailto, relative paths
// and anchors, and images are shown as links (nothing is fetched until clicked).

import { Marked } from "marked";
import hljs from "highlight.js/lib/core";
import bash from "highlight.js/lib/languages/bash";
import c from "highlight.js/lib/languages/c";
import cpp from "highlight.js/lib/languages/cpp";
import css from "highlight.js/lib/languages/css";
import diff from "highlight.js/lib/languages/diff";
import go from "highlight.js/lib/languages/go";
import java from "highlight.js/lib/languages/java";
import javascript from "highlight.js/lib/languages/javascript";
import json from "highlight.js/lib/languages/json";
import markdown from "highlight.js/lib/languages/markdown";
import python from "highlight.js/lib/languages/python";
import rust from "highlight.js/lib/languages/rust";
import shell from "highlight.js/lib/languages/shell";
import sql from "highlight.js/lib/languages/sql";
import typescript from "highlight.js/lib/languages/typescript";
import xml from "highlight.js/lib/languages/xml";
import yaml from "highlight.js/lib/languages/yaml";

const LANGS = { bash, c, cpp, css, diff, go, java, javascript, json, markdown, python, rust, shell, sql, typescript, xml, yaml };
for (const [name, def] of Object.entries(LANGS)) hljs.registerLanguage(name, def);
hljs.registerAliases(["sh", "zsh", "console"], { languageName: "bash" });
hljs.registerAliases(["py", "python3", "ipython"], { languageName: "python" });
hljs.registerAliases(["js", "jsx", "mjs"], { languageName: "javascript" });
hljs.registerAliases(["ts", "tsx"], { languageName: "typescript" });
hljs.registerAliases(["html", "svg"], { languageName: "xml" });
hljs.registerAliases(["yml"], { languageName: "yaml" });

const ESC = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
export function escapeHtml(s) {
  return String(s).replace(/[&<>"']/g, (ch) => ESC[ch]);
}

const SAFE_URL = /^(https?:|mailto:|#|\/|\.\/|\.\.\/|[^:]*$)/i;
function safeUrl(href) {
  const h = String(href || "").trim();
  return SAFE_URL.test(h) ? h : "";
}

function highlight(code, lang) {
  const name = (lang || "").trim().split(/\s+/)[0].toLowerCase();
  if (name && hljs.getLanguage(name)) {
    try {
      return hljs.highlight(code, { language: name, ignoreIllegals: true }).value;
    } catch (e) {
      /* fall through to plain text */
    }
  }
  return escapeHtml(code);
}

const marked = new Marked({ gfm: true, breaks: false, async: false });
marked.use({
  renderer: {
    html(token) {
      // Raw HTML is shown as text, never interpreted (block HTML as a paragraph).
      const text = escapeHtml(token.text ?? token.raw ?? "");
      return token.block ? `<p>${text}</p>\n` : text;
    },
    code(token) {
      const lang = (token.lang || "").trim().split(/\s+/)[0];
      const cls = lang ? ` class="hljs language-${escapeHtml(lang)}"` : ' class="hljs"';
      return `<pre class="kandev-code"><code${cls}>${highlight(token.text, lang)}</code></pre>\n`;
    },
    link(token) {
      const href = safeUrl(token.href);
      const inner = this.parser.parseInline(token.tokens);
      if (!href) return inner;
      const title = token.title ? ` title="${escapeHtml(token.title)}"` : "";
      return `<a href="${escapeHtml(href)}"${title} target="_blank" rel="noopener noreferrer">${inner}</a>`;
    },
    image(token) {
      // No image loads by itself: a remote (or relative) image is shown as a link to it, so
      // an answer cannot make the browser fetch a URL the model chose. Inline data:image
      // pictures fetch nothing and are shown. Same rule as render.py's _image_as_link.
      const src = safeUrl(token.href);
      const alt = escapeHtml(token.text || "");
      if (/^data:image\//i.test(String(token.href || "").trim())) {
        return `<img src="${escapeHtml(String(token.href).trim())}" alt="${alt}">`;
      }
      if (!src) return alt;
      return `<a class="kandev-image-link" href="${escapeHtml(src)}" target="_blank" rel="noopener noreferrer" ` +
        `title="image not loaded: click to open it">🖼 ${alt || "image"} (${escapeHtml(src.slice(0, 120))})</a>`;
    },
  },
});

/** Markdown text -> HTML string (raw HTML escaped, code highlighted). */
export function renderMarkdown(text) {
  return marked.parse(String(text || ""));
}

const FENCE = /^ {0,3}(`{3,}|~{3,})/;

/**
 * Where the stable prefix of `text` ends: the offset just after the last blank line that
 * is outside a fenced code block and is followed by a non-indented line. Everything before
 * it will render the same however the text continues (up to reference links and loose
 * lists, which the final static rendering gets right). Scans from `from` (a known-stable
 * offset, outside any fence).
 */
export function stableEnd(text, from) {
  let pos = from;
  let fence = null;
  let best = from;
  let prevBlank = false;
  while (pos < text.length) {
    const nl = text.indexOf("\n", pos);
    if (nl < 0) break; // the last (unfinished) line never counts
    const line = text.slice(pos, nl);
    const m = FENCE.exec(line);
    if (fence) {
      if (m && m[1][0] === fence[0] && m[1].length >= fence.length && line.trim() === m[1]) fence = null;
      prevBlank = false;
    } else if (m) {
      if (prevBlank) best = pos;
      fence = m[1];
      prevBlank = false;
    } else if (line.trim() === "") {
      prevBlank = true;
    } else {
      if (prevBlank && !/^( {4}|\t|\s*([-*+]|\d+[.)])\s)/.test(line)) best = pos;
      prevBlank = false;
    }
    pos = nl + 1;
  }
  return best;
}

/**
 * A view's renderer: finished blocks are rendered once and kept; only the tail after the
 * stable boundary is re-rendered on each update.
 */
export class StreamRenderer {
  constructor(el, mode) {
    this.mode = mode || "markdown";
    this.el = el;
    this.text = "";
    this.stable = 0;
    this.done = document.createElement("div");
    this.tail = document.createElement("div");
    el.append(this.done, this.tail);
  }

  _html(s) {
    return this.mode === "plain" ? `<pre class="kandev-plain">${escapeHtml(s)}</pre>` : renderMarkdown(s);
  }

  set(text) {
    this.text = "";
    this.stable = 0;
    this.done.replaceChildren();
    this.tail.replaceChildren();
    this.append(text);
  }

  append(s) {
    if (!s) return;
    this.text += s;
    if (this.mode === "markdown") {
      const end = stableEnd(this.text, this.stable);
      if (end > this.stable) {
        const block = document.createElement("div");
        block.innerHTML = this._html(this.text.slice(this.stable, end));
        this.done.append(block);
        this.stable = end;
      }
      this.tail.innerHTML = this._html(this.text.slice(this.stable));
    } else {
      this.tail.innerHTML = this._html(this.text);
    }
  }
}

/**
 * Mount a StreamText view. Protocol (custom messages, kernel -> view):
 *   {"type": "append", "at": N, "text": s}  s starts at offset N of the full text
 *   {"type": "reset", "text": full}          replace everything
 * and view -> kernel: {"type": "sync", "have": N} when the view starts or sees a gap;
 * the kernel answers with "reset" if its text is not N characters long.
 */
export function mount(model, el) {
  el.classList.add("kandev-md");
  const r = new StreamRenderer(el, model.get("mode"));
  const initial = model.get("value") || "";
  if (initial) r.set(initial);
  const onMsg = (msg) => {
    if (!msg || typeof msg !== "object") return;
    if (msg.type === "reset") {
      r.set(msg.text || "");
    } else if (msg.type === "append") {
      const at = msg.at | 0;
      const have = r.text.length;
      if (at === have) r.append(msg.text);
      else if (at < have) r.append(String(msg.text).slice(have - at));
      else model.send({ type: "sync", have });
    }
  };
  model.on("msg:custom", onMsg);
  model.send({ type: "sync", have: r.text.length });
  return () => model.off("msg:custom", onMsg);
}

export const version = "1";
globalThis.__kandevNb = { version, mount, renderMarkdown, stableEnd, StreamRenderer, escapeHtml };

export default {
  initialize() {},
  render({ el }) {
    el.style.display = "none";
  },
};
