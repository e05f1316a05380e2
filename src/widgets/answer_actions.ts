// Answers become notebook content, and the turn header's chips (issue 27 points 4 and 9).
// Bundled into the bridge's module (bridge.ts; kandev_nb/notebook/answers.py): it runs in
// every tab whose widget manager made the bridge, and uses the bridge's own OPS.insert on the
// tab's notebook (context.model.sharedModel). Where no bridge runs (a saved notebook opened
// without its kernel, nbconvert, nbviewer, headless runs) nothing adds the buttons: the saved
// HTML holds none.
//
// A finished turn's output (answers.mark) is <div class="kandev-answer-host" data-kandev-turn=T
// data-kandev-kernel=K> (K: the kernel's token, the bridge's "kernel" trait)
// and its cell's display_data metadata is {"kandev": {"turn": T, "answer": <Markdown>}}. The
// host gets "Insert as Markdown cell below" (the answer, its dollars escaped by the kernel;
// none when the answer is empty); each code block of the answer's text
// (not of tool cards or thinking) gets "Insert as code cell below" (a ```bash block as a %%bash
// cell, html and javascript likewise) and "Copy". Inserted cells go
// below the %%claude cell, in click order (each after the one inserted before).
//
// Hidden characters (issue 32, point 6): a code block shows each invisible or direction-changing
// character as a <U+2067> mark (span.kandev-invisible, render/reveal.py) under a warning. The
// inserted or copied code leaves them out (marks and any raw one), and a note beside the buttons
// says how many were removed.
//
// Chips: a .kandev-run-info with data-kandev-session (live header and saved header) gets a mode
// chip and a model chip; choosing sends {kind: "next", session, mode | model} to the kernel,
// which applies it to the session's next turn (answers.py) and answers with "next-set".

import type { ChipNext } from "./messages";

const KANDEV_MODES = ["supervised", "plan", "acceptEdits", "autonomous"]; // kandev_nb.agent.permissions.MODES
const KANDEV_MODELS = ["sonnet", "opus", "haiku"];

const KANDEV_ACTIONS_CSS = `
.kandev-code-actions, .kandev-answer-actions { display: flex; gap: 4px; margin: 0.1em 0 0.5em 0; }
.kandev-answer-action { font: inherit; font-size: 85%; padding: 1px 8px; cursor: pointer; border-radius: 3px;
  border: 1px solid var(--jp-border-color1, #bdbdbd); background: var(--jp-layout-color2, #f6f8fa);
  color: var(--jp-ui-font-color1, #1f2328); }
.kandev-answer-action:hover { background: var(--jp-layout-color3, #e0e0e0); }
.kandev-chip { position: relative; display: inline-block; padding: 0 6px; border-radius: 9px; cursor: pointer;
  line-height: 1.35; vertical-align: baseline;
  border: 1px solid var(--jp-border-color1, #bdbdbd); background: var(--jp-layout-color2, #f6f8fa);
  color: var(--jp-ui-font-color1, #1f2328); }
.kandev-chip:hover { border-color: var(--jp-brand-color1, #1976d2); }
.kandev-chip-menu { position: absolute; top: 1.5em; left: 0; z-index: 10; display: flex; flex-direction: column;
  gap: 2px; padding: 4px; border-radius: 4px; border: 1px solid var(--jp-border-color1, #bdbdbd);
  background: var(--jp-layout-color1, #fff); box-shadow: 0 2px 6px rgba(0, 0, 0, 0.25); }
.kandev-chip-menu .kandev-chip-current { font-weight: bold; }
`;

function kandevStyle() {
  if (document.getElementById("kandev-answer-actions-css")) return;
  const style = document.createElement("style");
  style.id = "kandev-answer-actions-css";
  style.textContent = KANDEV_ACTIONS_CSS;
  document.head.append(style);
}

function kandevButton(label: any, cls: any, title: any) {
  const b = document.createElement("button");
  b.type = "button";
  b.className = `kandev-answer-action ${cls}`;
  b.textContent = label;
  b.title = title;
  return b;
}

function kandevCopy(text: any) {
  if (navigator.clipboard && window.isSecureContext) return navigator.clipboard.writeText(text);
  const area = document.createElement("textarea");
  area.value = text;
  area.style.cssText = "position:fixed;left:-9999px";
  document.body.append(area);
  area.select();
  try {
    document.execCommand("copy");
  } finally {
    area.remove();
  }
  return Promise.resolve();
}

function kandevFindTurn(shared: any, token: any) {
  for (const cell of shared.cells) {
    if (cell.cell_type !== "code" || typeof cell.getOutputs !== "function") continue;
    for (const out of cell.getOutputs()) {
      const meta = out && out.metadata && out.metadata.kandev;
      if (meta && meta.turn === token) return { cell, answer: String(meta.answer || "") };
    }
  }
  return null;
}

const KANDEV_CELL_MAGIC: Record<string, string> = { bash: "%%bash", sh: "%%bash", shell: "%%bash", zsh: "%%bash", console: "%%bash",
  html: "%%html", javascript: "%%javascript", js: "%%javascript" };

// render/reveal.py's HIDDEN: the invisible and direction-changing characters.
const KANDEV_HIDDEN = new RegExp(
  // render/reveal.py hidden_js_class() (tests/widgets/test_hidden_characters.py checks it)
  "[\\u0000-\\u0008\\u000b-\\u001f\\u007f-\\u009f\\u00ad\\u034f\\u061c\\u115f-\\u1160\\u17b4-\\u17b5\\u180b-\\u180f\\u200b-\\u200f\\u202a-\\u202e\\u2060-\\u206f\\u3164\\ufe00-\\ufe0d\\ufeff\\uffa0\\ufff0-\\ufff8\\u{1bca0}-\\u{1bca3}\\u{1d173}-\\u{1d17a}\\u{e0000}-\\u{e0fff}\\u2028-\\u2029\\ufff9-\\ufffb\\u2800]",
  "gu",
);

function kandevCodeOf(pre: any) {
  // The block's code without its hidden characters: {code, removed: [code names]}.
  const clone = pre.cloneNode(true);
  const removed = [];
  for (const mark of clone.querySelectorAll(".kandev-invisible")) {
    removed.push(mark.textContent.replace(/[<>]/g, ""));
    mark.remove();
  }
  const text = clone.textContent.replace(KANDEV_HIDDEN, (ch: any) => {
    removed.push("U+" + ch.codePointAt(0).toString(16).toUpperCase().padStart(4, "0"));
    return "";
  });
  return { code: text.replace(/\n$/, ""), removed };
}

function kandevRemovedNote(removed: any) {
  if (!removed.length) return "";
  const kinds = [...new Set(removed)].slice(0, 8).join(", ");
  const n = removed.length;
  return `Without ${n} invisible or direction-changing character${n === 1 ? "" : "s"} (${kinds}): removed from the code.`;
}

function kandevFenceLanguage(pre: any) {
  // The block's own fence language: the data-lang attribute the renderers (Python's saved
  // HTML, the live Markdown renderer) put on its <pre>; "" when there is none.
  return (pre.getAttribute("data-lang") || "").trim().toLowerCase();
}

function kandevCodeCell(pre: any, code: any) {
  // A shell (or HTML, JavaScript) block becomes a cell that runs it: %%bash, %%html, %%javascript.
  const magic = KANDEV_CELL_MAGIC[kandevFenceLanguage(pre)];
  return magic ? `${magic}\n${code}` : code;
}

function kandevDecorateHost(host: any, shared: any, ops: any) {
  const token = host.dataset.kandevTurn;
  if (!token || host.dataset.kandevActions === "1" || !kandevFindTurn(shared, token)) return;
  host.dataset.kandevActions = "1"; // one set of buttons, even with two views of the notebook
  let last: any = null; // the cell inserted last: the next one goes after it
  const insert = (cellType: any, source: any, button: any) => {
    const found = kandevFindTurn(shared, token);
    if (!found) {
      button.textContent = "The cell is gone";
      return;
    }
    const after = last ? [last, found.cell.id] : [found.cell.id];
    const made = ops.insert(shared, { cell_type: cellType, source, after_ids: after });
    last = made.id;
    button.dataset.inserted = String(Number(button.dataset.inserted || 0) + 1);
  };
  const root = host.querySelector(":scope > .kandev-turn") || host;
  // the answer's code blocks; a long turn's are inside its fold (render/fold.py)
  const blocks =
    ":scope > .kandev-text pre.kandev-code, :scope > .kandev-fold > .kandev-fold-body > .kandev-text pre.kandev-code";
  for (const pre of root.querySelectorAll(blocks)) {
    const bar = document.createElement("div");
    bar.className = "kandev-code-actions";
    const note = document.createElement("span");
    note.className = "kandev-removed-note";
    note.style.cssText = "color:var(--jp-error-color1,#cf222e);font-size:85%;align-self:center";
    const code = () => {
      const got = kandevCodeOf(pre);
      note.textContent = kandevRemovedNote(got.removed);
      return got.code;
    };
    const add = kandevButton("Insert as code cell below", "kandev-insert-code", "A new code cell under this %%claude cell");
    add.addEventListener("click", () => {
      insert("code", kandevCodeCell(pre, code()), add);
    });
    const copy = kandevButton("Copy", "kandev-copy-code", "Copy this code");
    copy.addEventListener("click", () =>
      kandevCopy(code()).then(
        () => (copy.textContent = "Copied"),
        () => (copy.textContent = "Copy failed"),
      ));
    bar.append(add, copy, note);
    pre.after(bar);
  }
  // A turn with no answer text (a --schema turn that answered through StructuredOutput only):
  // nothing to insert, no button (answers.markdown_cell_text gives "").
  if (!kandevFindTurn(shared, token)!.answer.trim()) return;
  const bar = document.createElement("div");
  bar.className = "kandev-answer-actions";
  const md = kandevButton("Insert as Markdown cell below", "kandev-insert-markdown",
    "The answer as a new Markdown cell under this %%claude cell");
  md.addEventListener("click", () => {
    const found = kandevFindTurn(shared, token);
    if (found) insert("markdown", found.answer, md); // its dollars escaped: no LaTeX (answers.py)
  });
  bar.append(md);
  root.append(bar);
}

function kandevChipMenu(chip: any, choices: any, current: any, pick: any) {
  const open = chip.querySelector(".kandev-chip-menu");
  if (open) return open.remove();
  const menu = document.createElement("span");
  menu.className = "kandev-chip-menu";
  for (const choice of choices) {
    const item = kandevButton(choice, "kandev-chip-choice", `Use ${choice} from the next turn on`);
    if (choice === current) item.classList.add("kandev-chip-current");
    item.addEventListener("click", (e) => {
      e.stopPropagation();
      menu.remove();
      pick(choice);
    });
    menu.append(item);
  }
  chip.append(menu);
}

function kandevDecorateChips(info: any, say: (content: ChipNext) => void) {
  if (info.dataset.kandevChips === "1" || !info.dataset.kandevSession) return;
  info.dataset.kandevChips = "1";
  const session = info.dataset.kandevSession;
  for (const [kind, choices] of [["mode", KANDEV_MODES], ["model", KANDEV_MODELS]] as [string, string[]][]) {
    const span = info.querySelector(`.kandev-run-${kind}`);
    if (!span) continue;
    const chip = document.createElement("span");
    chip.className = `kandev-chip kandev-chip-${kind}`;
    chip.tabIndex = 0;
    chip.title = `The ${kind} of this session's next turn (as %%claude --${kind} would)`;
    const label = document.createElement("span");
    label.className = "kandev-chip-label";
    label.textContent = `${span.textContent} ▾`;
    chip.append(label);
    chip.addEventListener("keydown", (e) => {
      if (e.target === chip && (e.key === "Enter" || e.key === " ")) {
        e.preventDefault();
        e.stopPropagation(); // not the notebook's Enter (edit mode)
        chip.click();
      }
    });
    chip.addEventListener("click", () =>
      kandevChipMenu(chip, kind === "model" ? [...choices, "other…"] : choices, span.textContent, (picked: any) => {
        const choice = picked === "other…" ? (window.prompt("Model name or alias for the next turn") || "").trim() : picked;
        if (!choice) return;
        say(kind === "model" ? { kind: "next", session, model: choice } : { kind: "next", session, mode: choice });
        label.textContent = `${span.textContent} → ${choice} next ▾`;
      }));
    span.replaceWith(chip);
  }
}

export function kandevAnswerActions(shared: any, ops: any, say: (content: ChipNext) => void, kernel: any) {
  // Only this kernel's outputs: a finished turn's host carries data-kandev-kernel, a live view's
  // root the class kandev-k-<kernel> (another notebook's kernel has its own bridge).
  const host = `.kandev-answer-host[data-kandev-kernel="${kernel}"]`;
  const live = `.kandev-k-${kernel}`;
  kandevStyle();
  const infos = ".kandev-run-info[data-kandev-session]";
  const decorate = (root: any) => {
    // root: the document, or an element the page just added (and what it holds)
    const hosts = [...root.querySelectorAll(`${host}[data-kandev-turn]:not([data-kandev-actions])`)];
    if (root.matches && root.matches(`${host}[data-kandev-turn]:not([data-kandev-actions])`)) hosts.push(root);
    for (const el of hosts) kandevDecorateHost(el, shared, ops);
    const found = [...root.querySelectorAll(infos)];
    if (root.matches && root.matches(infos)) found.push(root);
    for (const info of found) {
      if (info.dataset.kandevChips !== "1" && info.closest(`${host}, ${live}`)) kandevDecorateChips(info, say);
    }
  };
  // Only what was added is looked at, once per animation frame: a streaming answer adds nodes
  // many times a second, and a scan of the whole page each time would cost the page's size
  // (issue 35).
  const added = new Set();
  let queued = false;
  const observer = new MutationObserver((records) => {
    for (const r of records) for (const n of r.addedNodes) if (n.nodeType === Node.ELEMENT_NODE) added.add(n);
    if (queued || !added.size) return;
    queued = true;
    requestAnimationFrame(() => {
      queued = false;
      const roots = [...added].filter((n: any) => n.isConnected);
      added.clear();
      for (const n of roots) decorate(n);
    });
  });
  observer.observe(document.body, { childList: true, subtree: true });
  decorate(document);
  return () => observer.disconnect();
}
