// Approvals you cannot miss (ApprovalNotifier in notify.py): one notification per waiting
// approval, a badge on the notebook's tab, the count in the page title.
//
// anywidget calls initialize({model}) once per frontend widget manager that creates the model
// (every open tab of this kernel's notebook, and again after a reload). Model "items" (JSON)
// lists the waiting approvals: {id, tool, full_tool, summary, cell, notebook, left_s, age_s,
// question, reminded, complete, digest}. Several managers in one page share one registry ((window as any).__kandevNotify),
// keyed by kernel id, so a notebook open twice shows each approval once.
//
// JupyterLab's own notifications (the "apputils:notify" command, JupyterLab >= 4.0) are used when
// the page exposes the app as (window as any).jupyterapp; their buttons run the command
// "kandev-nb:answer-approval". Otherwise a toast of our own, drawn with JupyterLab's theme
// variables, sits in the bottom right corner (class kandev-toast).
//
// Messages (widget comm; ToastAnswer, ToastAnswered in kandev_nb/notebook/widget_messages.py): tab -> kernel {kind: "answer", id, action: "allow" | "deny", reason?, digest?};
// kernel -> tab {kind: "answered", id, ok, error?}.
//
// A notification shows one line of the request (item.summary). It offers Allow only when the
// kernel says that line is the whole payload (item.complete; issue 32, point 3), and then never
// cuts it; otherwise it offers Show (the card, which shows it whole) and Deny. An Allow sends
// the line's digest back, and the kernel refuses one for a line that was only a summary.

import type { ToastAnswer, ToastAnswered } from "./messages";

const COMMAND = "kandev-nb:answer-approval";
const TITLE_MARK = /^\(\d+\) ⏳ /;
const STYLE = `
.kandev-toasts { position: fixed; right: 12px; bottom: 36px; z-index: 10000; display: flex;
  flex-direction: column; gap: 8px; max-width: 440px; font-family: var(--jp-ui-font-family, sans-serif); }
.kandev-toast { background: var(--jp-layout-color1, #fff); color: var(--jp-ui-font-color1, #1f2328);
  border: 1px solid var(--jp-border-color1, #bdbdbd); border-left: 4px solid var(--jp-warn-color1, #bf8700);
  border-radius: 4px; box-shadow: var(--jp-elevation-z6, 0 3px 10px rgba(0,0,0,.3)); padding: 8px 10px;
  font-size: var(--jp-ui-font-size1, 13px); }
.kandev-toast.kandev-reminded { border-left-color: var(--jp-error-color1, #cf222e); }
.kandev-toast-head { font-weight: 600; margin-bottom: 2px; overflow-wrap: anywhere; }
.kandev-toast-what { color: var(--jp-ui-font-color1, #1f2328); font-family: var(--jp-code-font-family, monospace);
  font-size: var(--jp-code-font-size, 12px); overflow-wrap: anywhere; margin: 2px 0; }
.kandev-toast-left { color: var(--jp-ui-font-color2, #57606a); font-size: var(--jp-ui-font-size0, 11px); }
.kandev-toast-note:empty, .kandev-toast-partial:empty { display: none; }
.kandev-toast-partial { color: var(--jp-ui-font-color2, #57606a); font-size: var(--jp-ui-font-size0, 11px); font-style: italic; }
.kandev-toast-note { color: var(--jp-error-color1, #cf222e); font-size: var(--jp-ui-font-size0, 11px); }
.kandev-toast-buttons { display: flex; gap: 6px; justify-content: flex-end; margin-top: 6px; }
.kandev-toast-buttons button { border: none; border-radius: 2px; padding: 3px 12px; cursor: pointer;
  font-size: var(--jp-ui-font-size1, 13px); color: var(--jp-ui-inverse-font-color1, #fff);
  background: var(--jp-layout-color3, #757575); }
.kandev-toast-buttons button.kandev-toast-allow { background: var(--jp-brand-color1, #1976d2); }
.kandev-toast-buttons button.kandev-toast-deny { background: var(--jp-error-color1, #d32f2f); }
.kandev-toast-buttons button.kandev-toast-show { background: transparent; color: var(--jp-brand-color1, #1976d2);
  box-shadow: inset 0 0 0 1px var(--jp-brand-color1, #1976d2); }
.kandev-toast-buttons button:disabled { opacity: 0.5; cursor: default; }
.lm-TabBar-tabLabel[data-kandev-waiting]::before { content: "⏳ " attr(data-kandev-waiting); position: static;
  background: var(--jp-warn-color1, #bf8700); color: var(--jp-ui-inverse-font-color0, #fff); border-radius: 8px;
  padding: 0 5px; margin-right: 4px; font-size: var(--jp-ui-font-size0, 11px); line-height: 16px; }
`;

function registry() {
  if (!(window as any).__kandevNotify) {
    (window as any).__kandevNotify = { kernels: new Map(), toasts: new Map(), title: null, timer: null };
  }
  return (window as any).__kandevNotify;
}

function fmtLeft(seconds: any) {
  const s = Math.max(0, Math.ceil(seconds));
  return s >= 60 ? `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}` : `${s} s`;
}

function basename(path: any) {
  return path ? String(path).split("/").pop() : "";
}

function labApp() {
  const app = (window as any).jupyterapp;
  return app && app.commands && app.commands.hasCommand("apputils:notify") ? app : null;
}

function allItems(reg: any) {
  const out = [];
  for (const [key, entry] of reg.kernels) for (const item of entry.items) out.push({ key, entry, item });
  return out;
}

// ---- what a notification says ------------------------------------------------------------

function leftText(item: any, received: any) {
  const age = item.age_s + (Date.now() - received) / 1000;
  if (item.left_s === null || item.left_s === undefined) {
    return `waiting ${fmtLeft(age)}; the cell waits for your answer`;
  }
  return `${fmtLeft(item.left_s - (Date.now() - received) / 1000)} left, then it is denied`;
}

function headText(item: any) {
  const where = [basename(item.notebook) || "this notebook", item.cell !== null ? `In [${item.cell}]` : null]
    .filter(Boolean)
    .join(" · ");
  const verb = item.question ? "Claude asks" : `Claude wants to use ${item.tool}`;
  return `${item.reminded ? "Still waiting — " : ""}${where}: ${verb}`;
}

// ---- the page title and the tab badge --------------------------------------------------------

function applyTitle(reg: any) {
  const count = allItems(reg).length;
  const bare = document.title.replace(TITLE_MARK, "");
  const wanted = count ? `(${count}) ⏳ ${bare}` : bare;
  if (document.title !== wanted) document.title = wanted;
}

function applyBadges(reg: any) {
  const counts = new Map();
  for (const { item } of allItems(reg)) {
    const name = basename(item.notebook);
    if (name) counts.set(name, (counts.get(name) || 0) + 1);
  }
  for (const tab of document.querySelectorAll<HTMLElement>(".lm-TabBar-tab")) {
    const label = tab.querySelector<HTMLElement>(".lm-TabBar-tabLabel");
    const n = label ? counts.get((label.textContent || "").trim()) : undefined;
    if (n) {
      if (tab.dataset.kandevWaiting !== String(n)) tab.dataset.kandevWaiting = String(n);
      if (label!.dataset.kandevWaiting !== String(n)) label!.dataset.kandevWaiting = String(n);
      tab.title = tab.title.includes("approval") ? tab.title : `${n} approval(s) waiting\n${tab.title}`;
    } else if (tab.dataset.kandevWaiting) {
      delete tab.dataset.kandevWaiting;
      if (label) delete label.dataset.kandevWaiting;
      tab.title = tab.title.replace(/^\d+ approval\(s\) waiting\n/, "");
    }
  }
}

// ---- Show: the card in its notebook ------------------------------------------------------------

function findCard(item: any): HTMLElement | null {
  const exact = document.querySelector(`.kandev-approval-controls[data-request-id="${CSS_escape(item.id)}"]`);
  if (exact) return (exact.closest(".kandev-approval") || exact) as HTMLElement;
  if (item.question) return document.querySelector(".kandev-question-card:not(.kandev-decided)");
  return null;
}

function CSS_escape(text: any) {
  return window.CSS && window.CSS.escape ? window.CSS.escape(text) : String(text).replace(/["\\]/g, "\\$&");
}

function activateTab(item: any) {
  const name = basename(item.notebook);
  if (!name) return;
  for (const tab of document.querySelectorAll<HTMLElement>(".lm-DockPanel-tabBar .lm-TabBar-tab")) {
    const label = tab.querySelector<HTMLElement>(".lm-TabBar-tabLabel");
    if (!label || (label.textContent || "").trim() !== name || tab.classList.contains("lm-mod-current")) continue;
    const app = (window as any).jupyterapp;
    if (app && app.shell && tab.dataset.id) app.shell.activateById(tab.dataset.id);
    else tab.dispatchEvent(new PointerEvent("pointerdown", { bubbles: true, button: 0 }));
    return;
  }
}

function show(item: any) {
  activateTab(item);
  const card = findCard(item);
  if (!card) return false;
  card.scrollIntoView({ block: "center", inline: "nearest" });
  if (!card.hasAttribute("tabindex")) card.tabIndex = 0;
  card.focus({ preventScroll: true });
  return true;
}

// ---- JupyterLab's notifications ------------------------------------------------------------------

function allowable(item: any) {
  return !item.question && item.complete === true; // the line shown is the whole payload
}

const PARTIAL = "Only a summary of the request is shown here: Show opens its card, which shows all of it, to allow it.";

function labActions(key: any, item: any) {
  const args = (action: any) => ({ key, id: item.id, action });
  const actions = [];
  if (allowable(item)) actions.push({ label: "Allow", commandId: COMMAND, args: args("allow"), displayType: "accent" });
  actions.push({ label: item.question ? "Skip" : "Deny", commandId: COMMAND, args: args("deny"), displayType: "warn" });
  actions.push({ label: "Show", commandId: COMMAND, args: args("show"), displayType: "link" });
  return actions;
}

function ensureCommand(app: any) {
  if (app.commands.hasCommand(COMMAND)) return;
  app.commands.addCommand(COMMAND, {
    label: "Answer a kandev-nb approval",
    execute: (args: any) => answer(registry(), args.key, args.id, args.action),
  });
}

// ---- our own toast ---------------------------------------------------------------------------------

function toastBox() {
  let box = document.querySelector(".kandev-toasts");
  if (!box) {
    box = document.createElement("div");
    box.className = "kandev-toasts";
    box.setAttribute("role", "region");
    box.setAttribute("aria-label", "Claude approvals waiting");
    document.body.append(box);
  }
  return box;
}

function domToast(reg: any, key: any, item: any) {
  const el = document.createElement("div");
  el.className = "kandev-toast";
  el.dataset.requestId = item.id;
  el.setAttribute("role", "alert");
  const head = document.createElement("div");
  head.className = "kandev-toast-head";
  const what = document.createElement("div");
  what.className = "kandev-toast-what";
  const left = document.createElement("div");
  left.className = "kandev-toast-left";
  const partial = document.createElement("div");
  partial.className = "kandev-toast-partial";
  if (!item.question && !allowable(item)) partial.textContent = PARTIAL;
  const note = document.createElement("div");
  note.className = "kandev-toast-note";
  const row = document.createElement("div");
  row.className = "kandev-toast-buttons";
  const mk = (label: any, cls: any, action: any) => {
    const b = document.createElement("button");
    b.textContent = label;
    b.className = cls;
    b.addEventListener("click", () => answer(reg, key, item.id, action));
    return b;
  };
  if (allowable(item)) row.append(mk("Allow", "kandev-toast-allow", "allow"));
  row.append(mk(item.question ? "Skip" : "Deny", "kandev-toast-deny", "deny"), mk("Show", "kandev-toast-show", "show"));
  el.append(head, what, partial, left, note, row);
  toastBox().append(el);
  return { el, head, what, left, note };
}

// ---- one toast per waiting approval --------------------------------------------------------------

function shortLeft(item: any, received: any) {
  const gone = (Date.now() - received) / 1000;
  if (item.left_s === null || item.left_s === undefined) return `waiting ${fmtLeft(item.age_s + gone)}`;
  return `${fmtLeft(item.left_s - gone)} left`;
}

// JupyterLab cuts a toast's message at 140 characters: the time left before the summary, whose
// end (a file's name) is kept. A line that is the whole payload (Allow is offered) is never cut:
// the head is, from its start.
function message(item: any, received: any) {
  let head = `⏳ ${headText(item)} (${shortLeft(item, received)}) — `;
  if (allowable(item) && head.length + item.summary.length > 138) {
    const keep = Math.max(0, 138 - item.summary.length - 1);
    head = "…" + head.slice(head.length - keep);
    return head + item.summary;
  }
  const room = Math.max(24, 138 - head.length);
  const what = item.summary.length > room ? "…" + item.summary.slice(item.summary.length - room + 1) : item.summary;
  return head + what;
}

function draw(reg: any) {
  const app = labApp();
  const live = new Set();
  reg.handled = handledKeys(reg);
  for (const { key, entry, item } of allItems(reg)) {
    if (extensionHandles(key)) continue; // kandev-nb's JupyterLab extension notifies for this kernel
    const tid = `${key}:${item.id}`;
    live.add(tid);
    let toast = reg.toasts.get(tid);
    if (toast && (toast.reminded !== item.reminded || toast.item.digest !== item.digest)) {
      dropToast(toast); // a reminder (or a request that changed): a new toast, in front
      toast = null;
    }
    if (!toast) {
      toast = { key, item, received: entry.received, reminded: item.reminded, lab: null, dom: null };
      toast.sent = headText(item); // what JupyterLab's notification says (updated when it changes)
      if (app) {
        ensureCommand(app);
        app.commands
          .execute("apputils:notify", {
            message: message(item, entry.received),
            type: item.reminded ? "error" : "warning",
            options: { autoClose: false, actions: labActions(key, item), data: { kandev: item.id } },
          })
          .then((id: any) => {
            toast.lab = id;
            if (!reg.toasts.has(tid)) dropToast(toast);
            else if (toast.sent !== headText(toast.item)) updateLab(app, toast, toast.item, toast.received);
          })
          .catch((err: any) => console.warn("kandev-nb: JupyterLab notification failed", err));
      } else {
        toast.dom = domToast(reg, key, item);
        toast.dom.el.classList.toggle("kandev-reminded", !!item.reminded);
      }
      reg.toasts.set(tid, toast);
    }
    toast.item = item;
    if (toast.lab && app && toast.sent !== headText(item)) {
      updateLab(app, toast, item, entry.received); // the notebook's name arrived (a hello after a reload)
    }
    toast.received = entry.received;
    if (toast.dom) {
      toast.dom.head.textContent = headText(item);
      toast.dom.what.textContent = item.summary;
      toast.dom.left.textContent = leftText(item, entry.received);
    }
  }
  for (const [tid, toast] of reg.toasts) {
    if (!live.has(tid)) {
      dropToast(toast);
      reg.toasts.delete(tid);
    }
  }
  applyTitle(reg);
  applyBadges(reg);
}

function dropToast(toast: any) {
  if (toast.dom) toast.dom.el.remove();
  const app = (window as any).jupyterapp;
  if (toast.lab && app && app.commands) {
    app.commands.execute("apputils:dismiss-notification", { id: toast.lab }).catch(() => {});
  }
}

function updateLab(app: any, toast: any, item: any, received: any) {
  toast.sent = headText(item);
  app.commands
    .execute("apputils:update-notification", {
      id: toast.lab,
      message: message(item, received),
      type: item.reminded ? "error" : "warning",
      autoClose: false,
      actions: labActions(toast.key, item),
    })
    .catch(() => {});
}

// kandev-nb's JupyterLab extension (src/index.ts) sets (window as any).__kandevNbLab: for a kernel whose
// channel it holds, its notifications (JupyterLab's own) and Claude panel replace these toasts.
function extensionHandles(key: any) {
  const lab = (window as any).__kandevNbLab;
  try {
    return !!(lab && typeof lab.handles === "function" && lab.handles(key));
  } catch (e) {
    return false;
  }
}

function handledKeys(reg: any) {
  return [...reg.kernels.keys()].filter(extensionHandles).join(",");
}

function tick(reg: any) {
  if (handledKeys(reg) !== reg.handled) draw(reg); // the extension took a kernel over, or let it go
  reg.ticks = (reg.ticks || 0) + 1;
  const app = reg.ticks % 5 === 0 ? labApp() : null; // JupyterLab's toast: its time left every 5 s
  for (const toast of reg.toasts.values()) {
    if (toast.dom) toast.dom.left.textContent = leftText(toast.item, toast.received);
    if (toast.lab && app) updateLab(app, toast, toast.item, toast.received);
  }
  applyTitle(reg);
  applyBadges(reg);
}

function answer(reg: any, key: any, id: any, action: any) {
  const entry = reg.kernels.get(key);
  const toast = reg.toasts.get(`${key}:${id}`);
  const item = entry && entry.items.find((i: any) => i.id === id);
  if (!entry || !item) return;
  if (action === "show") {
    if (!show(item) && toast && toast.dom) {
      toast.dom.note.textContent = "Its card is not in this page (the cell was not found): answer here.";
    }
    return;
  }
  if (action === "allow" && !allowable(item)) return; // only the card (Show) allows a summarised request
  if (toast && toast.dom) for (const b of toast.dom.el.querySelectorAll("button")) b.disabled = true;
  entry.send({ kind: "answer", id, action, reason: "", digest: item.digest || null });
}

function initialize({ model }: any) {
  const reg = registry();
  if (!document.getElementById("kandev-notify-style")) {
    const style = document.createElement("style");
    style.id = "kandev-notify-style";
    style.textContent = STYLE;
    document.head.append(style);
  }
  const manager = model.widget_manager;
  const kernel = manager && manager.kernel;
  const key = kernel && kernel.id ? kernel.id : "kernel-" + Math.random().toString(36).slice(2, 10);
  const entry = { items: [], received: Date.now(), send: (c: ToastAnswer) => model.send(c) };
  reg.kernels.set(key, entry);
  const load = () => {
    try {
      entry.items = JSON.parse(model.get("items") || "[]");
    } catch (e) {
      entry.items = [];
    }
    entry.received = Date.now();
    draw(reg);
  };
  const onMessage = (msg: ToastAnswered) => {
    if (!msg || msg.kind !== "answered") return;
    const toast = reg.toasts.get(`${key}:${msg.id}`);
    if (!msg.ok && toast && toast.dom) {
      toast.dom.note.textContent = msg.error || "not answered";
      for (const b of toast.dom.el.querySelectorAll("button")) b.disabled = false;
    }
  };
  // a restart or shutdown of the kernel ends its turns: its toasts, badge and title count go at once
  const onStatus = (_kernel: any, status: any) => {
    if (status === "restarting" || status === "autorestarting" || status === "dead") {
      entry.items = [];
      draw(reg);
    }
  };
  if (kernel && kernel.statusChanged) kernel.statusChanged.connect(onStatus);
  model.on("change:items", load);
  model.on("msg:custom", onMessage);
  if (!reg.timer) reg.timer = setInterval(() => tick(reg), 1000);
  if (!reg.observer) {
    const title = document.querySelector("title");
    if (title) {
      reg.observer = new MutationObserver(() => applyTitle(reg));
      reg.observer.observe(title, { childList: true, characterData: true, subtree: true });
    }
  }
  load();
  return () => {
    model.off("change:items", load);
    model.off("msg:custom", onMessage);
    if (kernel && kernel.statusChanged) kernel.statusChanged.disconnect(onStatus);
    if (reg.kernels.get(key) === entry) reg.kernels.delete(key);
    draw(reg);
  };
}

export default { initialize };
