// StreamText view loader. The Markdown renderer lives in the KandevLib widget's module
// (sent once per kernel); this stub waits for it and mounts the streaming view.
//
// Hidden characters (issue 32, point 6): in the answer's code blocks (pre.kandev-code) each
// invisible or direction-changing character is shown as a <U+2067> mark under a warning line,
// as a card shows them (render/reveal.py: the same HIDDEN set, classes and wording), while it
// streams too; a MutationObserver marks each block the renderer (re)draws.
const L = () => (globalThis as any).__kandevNb;
const HIDDEN = new RegExp(
  // render/reveal.py hidden_js_class() (tests/widgets/test_hidden_characters.py checks it)
  "[\\u0000-\\u0008\\u000b-\\u001f\\u007f-\\u009f\\u00ad\\u034f\\u061c\\u115f-\\u1160\\u17b4-\\u17b5\\u180b-\\u180f\\u200b-\\u200f\\u202a-\\u202e\\u2060-\\u206f\\u3164\\ufe00-\\ufe0d\\ufeff\\uffa0\\ufff0-\\ufff8\\u{1bca0}-\\u{1bca3}\\u{1d173}-\\u{1d17a}\\u{e0000}-\\u{e0fff}\\u2028-\\u2029\\ufff9-\\ufffb\\u2800]",
  "u",
);
const MARK_STYLE =
  "background:var(--jp-warn-color3,#fff8c5);color:var(--jp-warn-color0,#7d4e00);" +
  "border:1px solid var(--jp-warn-color1,#9a6700);border-radius:3px;padding:0 1px;font-weight:bold";

function codeName(ch: any) {
  return "U+" + ch.codePointAt(0).toString(16).toUpperCase().padStart(4, "0");
}

function streaming(node: any) {
  // The text nodes the renderer still writes to (an open code block's last lines: trailing
  // text children of its <code>): left as they are until the block is drawn again.
  if (!node.parentNode || node.parentNode.tagName !== "CODE") return false;
  for (let n = node.nextSibling; n; n = n.nextSibling) if (n.nodeType !== Node.TEXT_NODE) return false;
  return true;
}

function markBlock(pre: any) {
  const walker = document.createTreeWalker(pre, NodeFilter.SHOW_TEXT);
  const nodes: any[] = [];
  for (let n: any = walker.nextNode(); n; n = walker.nextNode()) if (HIDDEN.test(n.data) && !streaming(n)) nodes.push(n);
  for (const node of nodes) {
    const frag = document.createDocumentFragment();
    let plain = "";
    for (const ch of node.data) {
      if (!HIDDEN.test(ch)) {
        plain += ch;
        continue;
      }
      if (plain) frag.append(plain);
      plain = "";
      const span = document.createElement("span");
      span.className = "kandev-invisible";
      span.style.cssText = MARK_STYLE;
      span.title = `${codeName(ch)}: invisible or direction-changing character`;
      span.textContent = `<${codeName(ch)}>`;
      frag.append(span);
    }
    if (plain) frag.append(plain);
    node.replaceWith(frag);
  }
  const found = [...pre.querySelectorAll(".kandev-invisible")].map((m) => m.textContent.replace(/[<>]/g, ""));
  for (const ch of pre.textContent.replace(/<U\+[0-9A-F]+>/g, "")) if (HIDDEN.test(ch)) found.push(codeName(ch));
  if (!found.length) return;
  let warn = pre.previousElementSibling;
  if (!warn || !warn.classList.contains("kandev-invisible-warning")) {
    warn = document.createElement("div");
    warn.className = "kandev-invisible-warning";
    warn.style.cssText = "color:var(--jp-error-color1,#cf222e);font-weight:bold;margin:0.2em 0";
    pre.before(warn);
  }
  const n = found.length;
  const kinds = [...new Set(found)].slice(0, 8).join(", ");
  const text =
    `⚠ This input contains ${n} invisible or direction-changing character${n === 1 ? "" : "s"}, ` +
    `shown as <U+…> (${kinds}). Read it as shown: the text may not do what it seems to.`;
  if (warn.textContent !== text) warn.textContent = text;
}

function watch(el: any) {
  // Marks the code blocks whose content changed, once per animation frame, testing only the
  // text that changed (the block's own text only when it holds a hidden character): an update
  // costs the new text, not the block so far (issue 35).
  const dirty = new Set();
  let queued = false;
  const blockOf = (node: any) => {
    const e = node.nodeType === Node.ELEMENT_NODE ? node : node.parentElement;
    return e && e.closest("pre.kandev-code");
  };
  const flush = () => {
    queued = false;
    for (const pre of dirty as Set<any>) if (pre.isConnected) markBlock(pre);
    dirty.clear();
  };
  const note = (pre: any) => {
    if (!pre || !el.contains(pre)) return;
    dirty.add(pre);
    if (!queued) {
      queued = true;
      requestAnimationFrame(flush);
    }
  };
  const observer = new MutationObserver((records) => {
    for (const r of records) {
      if (r.type === "characterData") {
        if (HIDDEN.test((r.target as any).data)) note(blockOf(r.target));
        continue;
      }
      for (const n of r.addedNodes as any) {
        if (n.nodeType === Node.TEXT_NODE) {
          if (HIDDEN.test(n.data)) note(blockOf(n));
        } else if (n.nodeType === Node.ELEMENT_NODE && HIDDEN.test(n.textContent)) {
          const inside = blockOf(n);
          if (inside) note(inside);
          for (const pre of n.querySelectorAll("pre.kandev-code")) if (HIDDEN.test(pre.textContent)) note(pre);
        }
      }
    }
  });
  observer.observe(el, { childList: true, subtree: true, characterData: true });
  for (const pre of el.querySelectorAll("pre.kandev-code")) if (HIDDEN.test(pre.textContent)) markBlock(pre);
  return () => observer.disconnect();
}

async function lib(model: any) {
  if (L()) return L();
  const id = model.get("lib");
  try { if (id && model.widget_manager) await model.widget_manager.get_model(id); } catch (e) {}
  for (let i = 0; i < 500 && !L(); i++) await new Promise((r) => setTimeout(r, 20));
  return L();
}
export default {
  async render({ model, el }: any) {
    const k = await lib(model);
    if (!k) {
      el.textContent = "(kandev_nb: renderer not loaded)";
      return;
    }
    const stop = watch(el);
    const cleanup = await k.mount(model, el);
    return () => {
      stop();
      if (typeof cleanup === "function") cleanup();
    };
  },
};
