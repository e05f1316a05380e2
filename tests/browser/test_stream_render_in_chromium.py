"""The streaming renderer (``src/widgets/kandev_lib.ts``, built) in Chromium, without JupyterLab.

Texts are streamed in random chunks into the renderer as shipped and into today's
reference renderer (every finished block rendered once with marked, the open block
re-rendered whole on each update, written out below); once idle callbacks have run, both
show the same DOM (up to the wrapper ``<div>``s and whitespace between blocks), and while
streaming they show the same text. The shipped renderer must also do less work per
update: a long code block or table is never re-rendered whole.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from kandev_nb.notebook.widgets.stream import ASSETS

pytestmark = pytest.mark.timeout(300)

REFERENCE = r"""
class Reference {
  constructor(el) { this.el = el; this.text = ""; this.stable = 0; this.done = document.createElement("div");
    this.tail = document.createElement("div"); el.append(this.done, this.tail); this.renders = 0; }
  append(s) {
    const L = globalThis.__kandevNb;
    this.text += s;
    const end = L.stableEnd(this.text, this.stable);
    if (end > this.stable) {
      const block = document.createElement("div");
      block.innerHTML = L.renderMarkdown(this.text.slice(this.stable, end));
      this.done.append(block);
      this.stable = end;
    }
    this.renders += this.text.length - this.stable;
    this.tail.innerHTML = L.renderMarkdown(this.text.slice(this.stable));
  }
}
function canon(node) {
  const out = [];
  const walk = (n, pre) => {
    if (n.nodeType === 3) { if (pre || n.data.trim()) out.push(JSON.stringify(n.data)); return; }
    if (n.nodeType !== 1 && n.nodeType !== 11) return;
    const plainDiv = n.nodeType === 1 && n.tagName === "DIV" && !n.attributes.length;
    if (n.nodeType === 1 && !plainDiv) {
      out.push("<" + n.tagName + [...n.attributes].map((a) => ` ${a.name}="${a.value}"`).join("") + ">");
    }
    const inPre = pre || (n.nodeType === 1 && (n.tagName === "PRE" || n.tagName === "CODE"));
    // adjacent text nodes count as one (the renderer appends a code block line by line)
    let buf = null;
    for (const c of n.childNodes) {
      if (c.nodeType === 3) { buf = (buf ?? "") + c.data; continue; }
      if (buf !== null) { walk(document.createTextNode(buf), inPre); buf = null; }
      walk(c, inPre);
    }
    if (buf !== null) walk(document.createTextNode(buf), inPre);
    if (n.nodeType === 1 && !plainDiv) out.push("</" + n.tagName + ">");
  };
  walk(node, false);
  return out.join("");
}
const norm = (s) => s.replace(/\s+/g, "");  // whitespace between blocks differs (wrapper divs)
globalThis.compare = async ({ text, cuts }) => {
  const L = globalThis.__kandevNb;
  const a = document.createElement("div"), b = document.createElement("div");
  document.body.append(a, b);
  const r = new L.StreamRenderer(a, "markdown"), ref = new Reference(b);
  let prev = 0, textDiffers = 0, firstDiff = null, work = 0;
  const t0 = performance.now();
  let i = 0;
  for (const cut of [...cuts, text.length]) {
    const s = text.slice(prev, cut); prev = cut;
    // pieces get highlighted
    if (++i % 7 === 0) await new Promise((res) => requestIdleCallback(res, { timeout: 500 }));
    const w0 = performance.now(); r.append(s); work += performance.now() - w0;
    ref.append(s);
    if (norm(a.textContent) !== norm(b.textContent)) {
      textDiffers++;
      firstDiff ??= [norm(a.textContent).slice(-200), norm(b.textContent).slice(-200)];
    }
  }
  await new Promise((res) => setTimeout(res, 50));
  await new Promise((res) => (globalThis.requestIdleCallback || setTimeout)(res, { timeout: 2000 }));
  await new Promise((res) => setTimeout(res, 400));
  const same = canon(a) === canon(b);
  let at = 0; const ca = canon(a), cb = canon(b);
  while (at < ca.length && ca[at] === cb[at]) at++;
  a.remove(); b.remove();
  const around = [ca.slice(at - 80, at + 120), cb.slice(at - 80, at + 120)];
  return { same, textDiffers, firstDiff, around, refRendered: ref.renders };
};
"""


def _texts() -> dict[str, str]:
    from benchmarks._browser_page import answer

    cases = {name: answer(name, 0.15) for name in ("prose", "code", "table", "mix")}
    cases["edge"] = (
        "# Title\n\nIntro with `code` and a [link](https://x.org).\n\n"
        "```\nno language\n\n  indented\n```\n\n"
        "~~~js\nconst a = 1;\n~~~\n\n"
        "| a | b |\n|:--|--:|\n| 1 | 2 |\n| x | y | z |\n| only |\n\n"
        "| h |\n|---|\n| r |\n# heading right after a table\n\n"
        "- item 1\n- item 2\n\n"
        "```python\ndef f():\n    return '''\n\nnot = a fence\n'''\n```\nText right after the fence.\n\n"
        "    indented code\n\n"
        "A paragraph | with a pipe\nand a second line\n\n"
        "````md\n```\ninner\n```\n````\n\nend"
    )
    doc = "".join(f"line {i} of a docstring\n" + ("\n" if i % 9 == 0 else "") for i in range(90))
    body = "".join(f"def g{i}(x):\n    return x + {i}  # {i}\n\n" for i in range(40))
    cases["long strings"] = (
        f'Code:\n\n```python\n{body}X = """\n{doc}"""\n{body}/* not C */\n```\n\n'
        f"```js\n{body.replace('def', 'function').replace('):', ') {')}/*\n{doc}*/\nx = 1;\n```\n\nend"
    )
    return cases


def _load(page: Any) -> None:
    page.set_content("<!doctype html><html><body></body></html>")
    page.add_script_tag(content=(ASSETS / "kandev_lib.js").read_text(), type="module")
    page.wait_for_function("() => !!globalThis.__kandevNb")
    page.add_script_tag(content=REFERENCE)


@pytest.mark.parametrize("seed", [1, 2])
def test_streamed_rendering_is_the_same_as_today_for_every_shape(page: Any, seed: int) -> None:
    _load(page)
    rnd = random.Random(seed)
    for name, text in _texts().items():
        cuts, at = [], 0
        while at < len(text):
            at += rnd.choice((1, 2, 5, 12, 40, 300))
            if at < len(text):
                cuts.append(at)
        got = page.evaluate("arg => compare(arg)", {"text": text, "cuts": cuts})
        assert got["same"], (name, got["around"])
        assert got["textDiffers"] == 0, (name, got["firstDiff"])


KEEPS = r"""
async () => {
  const L = globalThis.__kandevNb;
  const el = document.createElement("div");
  document.body.append(el);
  const r = new L.StreamRenderer(el, "markdown");
  const out = {};
  // A table: the first row's <tr> is the same node after 60 more rows (never re-rendered).
  r.append("Rows:\n\n| n | sq |\n|---|---:|\n| 0 | 0 |\n");
  const firstRow = el.querySelector("tbody tr");
  for (let i = 1; i <= 60; i++) r.append(`| ${i} | ${i * i} |\n`);
  out.rowKept = !!firstRow && firstRow.isConnected;
  out.rows = el.querySelectorAll("tbody tr").length;
  // A code block: the <pre> shown while it is open is the same node after 60 more lines,
  // plain (not highlighted) until it closes ...
  r.append("\n\nCode:\n\n```python\ndef f(x):\n");
  const pre = el.querySelector("pre.kandev-code");
  for (let i = 0; i < 60; i++) r.append(`    x = x + ${i}  # step\n`);
  out.preKept = !!pre && pre.isConnected;
  out.plainWhileOpen = pre ? pre.querySelectorAll("span").length : -1;
  // ... then, when idle, its lines are highlighted while it is still open; the spans of
  // those lines stay the same nodes while more lines arrive (only new lines are highlighted)
  await new Promise((res) => (globalThis.requestIdleCallback || setTimeout)(res, { timeout: 2000 }));
  const firstSpan = pre.querySelector("span");
  out.highlightedWhileOpen = pre.querySelectorAll(".hljs-keyword").length;
  for (let i = 60; i < 140; i++) r.append(`    x = x + ${i}  # step\n`);
  await new Promise((res) => (globalThis.requestIdleCallback || setTimeout)(res, { timeout: 2000 }));
  out.spanKept = !!firstSpan && firstSpan.isConnected;
  r.append("    return x\n```\n\nDone.\n");
  await new Promise((res) => (globalThis.requestIdleCallback || setTimeout)(res, { timeout: 2000 }));
  await new Promise((res) => setTimeout(res, 100));
  const code = el.querySelector("pre.kandev-code code");
  out.highlighted = code ? code.querySelectorAll(".hljs-keyword").length : 0;
  out.text = code ? code.textContent : "";
  const whole = code ? L.renderMarkdown("```python\n" + code.textContent + "\n```\n") : "";
  out.sameAsWhole = code ? code.innerHTML === whole.match(/<code[^>]*>([\s\S]*)<\/code>/)[1] : false;
  el.remove();
  return out;
}
"""


def test_finished_rows_and_highlighted_code_lines_are_not_rendered_again(page: Any) -> None:
    _load(page)
    got = page.evaluate(KEEPS)
    assert got["rows"] == 61 and got["rowKept"], got
    assert got["preKept"] and got["plainWhileOpen"] == 0, got
    assert got["highlightedWhileOpen"] >= 1 and got["spanKept"], got
    assert got["highlighted"] >= 2 and got["sameAsWhole"], got  # def, return; as if highlighted in one go
    assert got["text"].startswith("def f(x):\n    x = x + 0  # step\n") and got["text"].endswith("    return x"), got
