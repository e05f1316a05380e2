// kandev_nb client library: Markdown (marked) + code highlighting (highlight.js core with a
// few common languages), and the streaming renderer used by StreamText views.
//
// Loaded ONCE per kernel by the KandevLib anywidget (its _esm); it publishes itself as
// globalThis.__kandevNb. Per-segment widgets carry only a tiny loader (see
// stream_text.ts) that waits for this object, so the ~100 KB of library code is
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
import type { StreamAppend, StreamReset, StreamSync } from "./messages";

const LANGS = { bash, c, cpp, css, diff, go, java, javascript, json, markdown, python, rust, shell, sql, typescript, xml, yaml };
for (const [name, def] of Object.entries(LANGS)) hljs.registerLanguage(name, def);
hljs.registerAliases(["sh", "zsh", "console"], { languageName: "bash" });
hljs.registerAliases(["py", "python3", "ipython"], { languageName: "python" });
hljs.registerAliases(["js", "jsx", "mjs"], { languageName: "javascript" });
hljs.registerAliases(["ts", "tsx"], { languageName: "typescript" });
hljs.registerAliases(["html", "svg"], { languageName: "xml" });
hljs.registerAliases(["yml"], { languageName: "yaml" });

const ESC: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
export function escapeHtml(s: any) {
  return String(s).replace(/[&<>"']/g, (ch) => ESC[ch]);
}

const SAFE_URL = /^(https?:|mailto:|#|\/|\.\/|\.\.\/|[^:]*$)/i;
function safeUrl(href: any) {
  const h = String(href || "").trim();
  return SAFE_URL.test(h) ? h : "";
}

function highlight(code: any, lang: any) {
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

/**
 * Highlight `code` as highlight() does; `top` tells whether the highlighter ended in the
 * language's top-level mode (not inside a string or comment that spans lines), so that the
 * text after it, highlighted on its own, comes out as it would in one piece.
 */
export function highlightChunk(code: any, lang: any) {
  const name = (lang || "").trim().split(/\s+/)[0].toLowerCase();
  const def = name && hljs.getLanguage(name);
  if (def) {
    try {
      const res = hljs.highlight(code, { language: name, ignoreIllegals: true });
      return { html: res.value, top: res._top === def };
    } catch (e) {
      /* fall through to plain text */
    }
  }
  return { html: escapeHtml(code), top: true };
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
      const data = lang ? ` data-lang="${escapeHtml(lang)}"` : ""; // the fence's language: "Insert as code cell"
      return `<pre class="kandev-code"${data}><code${cls}>${highlight(token.text, lang)}</code></pre>\n`;
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
export function renderMarkdown(text: any) {
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
export function stableEnd(text: any, from: any) {
  const scan = new StableScan(from);
  return scan.feed(text);
}

/**
 * The scan of {@link stableEnd}, resumable: each {@link StableScan#feed} reads only the
 * complete lines it has not read yet, so an update costs the new text, not the open block.
 */
export class StableScan {
  best: any;
  fence: any;
  pos: any;
  prevBlank: any;
  constructor(from = 0) {
    this.pos = from;
    this.fence = null;
    this.best = from;
    this.prevBlank = false;
  }

  /** Read the complete lines of `text` after the last one read; returns the stable end. */
  feed(text: any) {
    let pos = this.pos;
    while (pos < text.length) {
      const nl = text.indexOf("\n", pos);
      if (nl < 0) break; // the last (unfinished) line never counts
      const line = text.slice(pos, nl);
      const m = FENCE.exec(line);
      if (this.fence) {
        const f = this.fence;
        if (m && m[1][0] === f[0] && m[1].length >= f.length && line.trim() === m[1]) this.fence = null;
        this.prevBlank = false;
      } else if (m) {
        if (this.prevBlank) this.best = pos;
        this.fence = m[1];
        this.prevBlank = false;
      } else if (line.trim() === "") {
        this.prevBlank = true;
      } else {
        if (this.prevBlank && !/^( {4}|\t|\s*([-*+]|\d+[.)])\s)/.test(line)) this.best = pos;
        this.prevBlank = false;
      }
      pos = nl + 1;
    }
    this.pos = pos;
    return this.best;
  }
}

const idle = globalThis.requestIdleCallback
  ? (fn: any) => globalThis.requestIdleCallback(fn, { timeout: 300 })
  : (fn: any) => setTimeout(fn, 0);

function fragment(html: any) {
  const t = document.createElement("template");
  t.innerHTML = html;
  return t.content;
}

// A line that ends a GFM table, as marked's table rule has it (blank lines aside), or that
// this renderer does not follow row by row (then the open block is re-rendered as before).
const NOT_A_ROW = /^( {4}|\t| {0,3}(#{1,6}(\s|$)|>|`{3,}|~{3,}|[*+-]([ \t]|$)|\d{1,9}[.)]([ \t]|$)|<|(\*[ \t]*){3,}$|(-[ \t]*){3,}$|(_[ \t]*){3,}$))/;
const OPEN_FENCE = /^(`{3,}(?=[^`]*$)|~{3,})(.*)$/;
const TABLE_DELIM = /^ {0,3}\|? *:?-+:? *(\| *:?-+:? *)*\|? *$/;

/**
 * The open block when it is a fenced code block that starts at column 0: its lines are
 * appended as plain text as they arrive (no re-parse, no re-render of what is shown), and
 * highlighted a piece at a time, only the new lines, in idle callbacks off the critical
 * path. A piece is kept only if the highlighter ends it at the language's top level (see
 * highlightChunk), so the pieces together are exactly the block highlighted in one go;
 * the rest is highlighted when the fence closes.
 */
class OpenCode {
  static PIECE = 40;
  code: any;
  el: any;
  end: any;
  fence: any;
  lang: any;
  partial: any;
  plain: any;
  plainLines: any;
  pos: any;
  scheduled: any;
  want: any;
  static start(tail: any) {
    const nl = tail.indexOf("\n");
    if (nl < 0) return null;
    const first = tail.slice(0, nl);
    const m = OPEN_FENCE.exec(first);
    if (!m) return null;
    const shell = fragment(renderMarkdown(first + "\n")).firstElementChild;
    const code = shell && shell.querySelector("code");
    if (!shell || shell.tagName !== "PRE" || !code || code.childNodes.length) return null;
    return new OpenCode(shell, code, m[1], m[2].trim().split(/\s+/)[0], nl + 1);
  }

  constructor(el: any, code: any, fence: any, lang: any, pos: any) {
    this.el = el;
    this.code = code;
    this.fence = fence;
    this.lang = lang;
    this.pos = pos; // offset in the block's text of the first line not yet shown in full
    this.plain = code.appendChild(document.createTextNode("")); // complete lines not yet highlighted
    this.plainLines = 0;
    this.want = OpenCode.PIECE; // highlight when this many plain lines wait
    this.partial = null; // the text node of the unfinished last line
    this.end = null; // offset just after the closing fence line, once it arrived
    this.scheduled = false;
  }

  /** Show the new complete lines of `tail` (the block's text so far, and what follows). */
  update(tail: any) {
    if (this.end !== null) return;
    let pos = this.pos;
    let add = "";
    while (pos < tail.length) {
      const nl = tail.indexOf("\n", pos);
      if (nl < 0) break;
      const line = tail.slice(pos, nl);
      const m = FENCE.exec(line);
      if (m && m[1][0] === this.fence[0] && m[1].length >= this.fence.length && line.trim() === m[1]) {
        this.end = nl + 1;
        break;
      }
      add += line + "\n";
      this.plainLines++;
      pos = nl + 1;
    }
    this.pos = pos;
    if (add) this.plain.appendData(add);
    const rest = this.end === null ? tail.slice(pos) : "";
    if (rest) {
      if (this.partial) this.partial.data = rest;
      else this.partial = this.code.appendChild(document.createTextNode(rest));
    } else if (this.partial) {
      this.partial.remove();
      this.partial = null;
    }
    if (this.end !== null || this.plainLines >= this.want) this._schedule();
  }

  _schedule() {
    if (this.scheduled) return;
    this.scheduled = true;
    idle(() => {
      this.scheduled = false;
      this._highlight();
    });
  }

  _highlight() {
    const text = this.plain.data;
    if (this.end !== null) { // closed: the rest in one piece, without the last newline
      const last = highlightChunk(text.endsWith("\n") ? text.slice(0, -1) : text, this.lang);
      this.code.insertBefore(fragment(last.html), this.plain);
      this.plain.remove();
      return;
    }
    if (this.plainLines < this.want) return;
    const piece = highlightChunk(text, this.lang);
    if (piece.top) {
      this.code.insertBefore(fragment(piece.html), this.plain);
      this.plain.deleteData(0, text.length);
      this.plainLines = 0;
      this.want = OpenCode.PIECE;
    } else {
      this.want = this.plainLines * 2; // inside a string or comment: wait for more lines
    }
  }
}

/**
 * The open block when it is a GFM table: each row is rendered once when its line is
 * complete (with the header, so cells and alignment come out as marked renders them in
 * the whole table) and appended; the unfinished last row is re-rendered alone.
 */
class OpenTable {
  body: any;
  el: any;
  end: any;
  failed: any;
  pending: any;
  pos: any;
  prefix: any;
  static start(tail: any) {
    const a = tail.indexOf("\n");
    const b = a < 0 ? -1 : tail.indexOf("\n", a + 1);
    if (b < 0) return null;
    const head = tail.slice(0, a);
    const delim = tail.slice(a + 1, b);
    if (!/^[^ \t]/.test(head) || !head.includes("|") || !TABLE_DELIM.test(delim) || NOT_A_ROW.test(head)) return null;
    const prefix = head + "\n" + delim + "\n";
    const table = fragment(renderMarkdown(prefix)).firstElementChild;
    if (!table || table.tagName !== "TABLE") return null;
    return new OpenTable(table, prefix, b + 1);
  }

  constructor(el: any, prefix: any, pos: any) {
    this.el = el;
    this.prefix = prefix;
    this.pos = pos;
    this.body = null;
    this.pending = null; // the <tr> of the unfinished last row
    this.end = null; // offset of the blank line that ended the table
    this.failed = false; // a line this renderer does not follow: re-render the block instead
  }

  _row(line: any) {
    const tr = fragment(renderMarkdown(this.prefix + line + "\n")).querySelector("tbody > tr");
    if (!tr) return null;
    if (!this.body) this.body = this.el.appendChild(document.createElement("tbody"));
    return tr;
  }

  update(tail: any) {
    if (this.end !== null || this.failed) return;
    let pos = this.pos;
    while (pos < tail.length) {
      const nl = tail.indexOf("\n", pos);
      if (nl < 0) break;
      const line = tail.slice(pos, nl);
      if (line.trim() === "") {
        this.end = pos;
        break;
      }
      const tr = NOT_A_ROW.test(line) ? null : this._row(line);
      if (!tr) {
        this.failed = true;
        return;
      }
      this.body.insertBefore(tr, this.pending);
      pos = nl + 1;
    }
    this.pos = pos;
    const rest = this.end === null ? tail.slice(pos) : "";
    const tr = rest.trim() && !NOT_A_ROW.test(rest) ? this._row(rest) : null;
    if (this.pending) this.pending.remove();
    this.pending = tr ? this.body.appendChild(tr) : null;
  }
}

/**
 * A view's renderer: finished blocks are rendered once and kept; the open block after the
 * stable boundary is re-rendered on each update, except a fenced code block (its lines are
 * appended as plain text, then it is highlighted once when it closes) and a table (row by
 * row): there an update costs the new text, not the block so far.
 */
export class StreamRenderer {
  done: any;
  el: any;
  mode: any;
  open: any;
  plain: any;
  restEl: any;
  scan: any;
  stable: any;
  tail: any;
  text: any;
  tried: any;
  constructor(el: any, mode: any) {
    this.mode = mode || "markdown";
    this.el = el;
    this.text = "";
    this.stable = 0;
    this.scan = new StableScan(0);
    this.open = null; // OpenCode | OpenTable for the block at `stable`
    this.tried = -1; // the `stable` offset for which no open-block renderer applies
    this.plain = null;
    this.done = document.createElement("div");
    this.tail = document.createElement("div");
    el.append(this.done, this.tail);
  }

  _html(s: any) {
    return this.mode === "plain" ? `<pre class="kandev-plain">${escapeHtml(s)}</pre>` : renderMarkdown(s);
  }

  set(text: any) {
    this.text = "";
    this.stable = 0;
    this.scan = new StableScan(0);
    this.open = null;
    this.tried = -1;
    this.plain = null;
    this.done.replaceChildren();
    this.tail.replaceChildren();
    this.append(text);
  }

  _finish(end: any) {
    // The blocks in [stable, end) are final: the open block's DOM is kept as it is, the
    // rest is rendered once.
    let from = this.stable;
    const open = this.open;
    if (open && open.end !== null && !open.failed && this.stable + open.end <= end) {
      const block = document.createElement("div");
      block.append(open.el);
      this.done.append(block);
      from = this.stable + open.end;
    }
    this.open = null;
    const rest = this.text.slice(from, end);
    if (rest.trim() || from === this.stable) {
      const block = document.createElement("div");
      block.innerHTML = this._html(rest) as string;
      this.done.append(block);
    }
    this.stable = end;
    this.tail.replaceChildren();
  }

  _renderTail() {
    const tail = this.text.slice(this.stable);
    if (!this.open && this.tried !== this.stable) {
      const a = tail.indexOf("\n");
      if (a >= 0) { // its first line is complete: a fence, a table header, or neither
        this.open = OpenCode.start(tail) || OpenTable.start(tail);
        if (this.open) this.tail.replaceChildren(this.open.el, (this.restEl = document.createElement("div")));
        else if (!tail.slice(0, a).includes("|") || tail.indexOf("\n", a + 1) >= 0) this.tried = this.stable;
      }
    }
    if (this.open) {
      this.open.update(tail);
      if (!this.open.failed) {
        const rest = this.open.end === null ? "" : tail.slice(this.open.end);
        this.restEl.innerHTML = rest.trim() ? this._html(rest) : "";
        return;
      }
      this.open = null;
      this.tried = this.stable;
    }
    this.tail.innerHTML = this._html(tail);
  }

  append(s: any) {
    if (!s) return;
    this.text += s;
    if (this.mode !== "markdown") {
      if (!this.plain) {
        this.tail.innerHTML = this._html("");
        this.plain = this.tail.firstElementChild;
      }
      this.plain.append(document.createTextNode(s));
      return;
    }
    if (this.open) this.open.update(this.text.slice(this.stable));
    const end = this.scan.feed(this.text);
    if (end > this.stable) this._finish(end);
    this._renderTail();
  }
}

/** The shortest time between two renders of a streaming view, in ms. */
export const RENDER_EVERY_MS = 100;

const frame = globalThis.requestAnimationFrame
  ? (fn: any) => globalThis.requestAnimationFrame(fn)
  : (fn: any) => setTimeout(fn, 16);

/**
 * Mount a StreamText view. Protocol (custom messages, kernel -> view):
 *   {"type": "append", "at": N, "text": s}  s starts at offset N of the full text
 *   {"type": "reset", "text": full}          replace everything
 * and view -> kernel: {"type": "sync", "have": N} when the view starts or sees a gap;
 * the kernel answers with "reset" if its text is not N characters long.
 *
 * Renders are coalesced (issue 35): the text that arrives is rendered in the next animation
 * frame, at most one render per RENDER_EVERY_MS (the first at once), so a busy page pays one
 * render for several updates, the notebook relays out its cells about as often as for
 * JupyterLab's own stream output (ipykernel sends that every 200 ms), and a hidden tab renders
 * nothing until it is shown.
 */
export function mount(model: any, el: any) {
  el.classList.add("kandev-md");
  const r = new StreamRenderer(el, model.get("mode"));
  const initial = model.get("value") || "";
  if (initial) r.set(initial);
  let pending = ""; // received, not yet rendered: starts at r.text.length
  let reset: any = null; // a "reset" text waiting for the next frame
  let scheduled = false;
  let closed = false;
  let last = -Infinity; // performance.now() of the last render
  const render = () => {
    scheduled = false;
    if (closed) return;
    last = performance.now();
    if (reset !== null) r.set(reset);
    if (pending) r.append(pending);
    reset = null;
    pending = "";
  };
  const later = () => {
    if (scheduled) return;
    scheduled = true;
    const wait = last + RENDER_EVERY_MS - performance.now();
    if (wait <= 0) frame(render);
    else setTimeout(() => frame(render), wait);
  };
  const onMsg = (msg: StreamAppend | StreamReset) => {
    if (!msg || typeof msg !== "object") return;
    if (msg.type === "reset") {
      reset = msg.text || "";
      pending = "";
      later();
    } else if (msg.type === "append") {
      const at = msg.at | 0;
      const have = (reset !== null ? reset.length : r.text.length) + pending.length;
      if (at === have) pending += msg.text;
      else if (at < have) pending += String(msg.text).slice(have - at);
      else model.send({ type: "sync", have } satisfies StreamSync);
      if (pending) later();
    }
  };
  model.on("msg:custom", onMsg);
  model.send({ type: "sync", have: r.text.length } satisfies StreamSync);
  return () => {
    closed = true;
    model.off("msg:custom", onMsg);
  };
}

export const version = "2";
(globalThis as any).__kandevNb = { version, mount, renderMarkdown, stableEnd, StableScan, StreamRenderer, escapeHtml, highlightChunk };

export default {
  initialize() {},
  render({ el }: any) {
    el.style.display = "none";
  },
};
