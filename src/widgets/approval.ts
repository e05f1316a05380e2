// The controls of an approval card (ApprovalControls in ../approval.py).
//
// Every answer is ONE custom message that carries what the person typed with the click:
//   {action: "allow"} | {action: "allow_always"} (the scoped session grant, model "grant_label")
//   | {action: "allow_tool"} (every call of the tool, model "tool_label") | {action: "deny", reason: <text>}
//   | {action: "edit"} (asks the kernel for the input as JSON) | {action: "allow_edited", input: <JSON text>}
//   | {action: "preview", input: <JSON text>} (while editing: the kernel redraws the proposal for it)
//   | {action: "allow_suggestion", index: <i>} (one of the CLI's permission_suggestions, model "suggestions")
//   | {action: "allow_all", rule: <text>} / {action: "deny_all", rule: <text>, reason: <text>} (a fleet's
//     card: the rule(s) in the card's rule field, one a line) | {action: "rule_preview", rule: <text>}
//     (while the rule is edited: the kernel redraws the buttons' labels and the count, model "fleet")
// A fleet's card (model "fleet", JSON, issue 33): "Allow (this row)", Deny, Edit; "Allow <rule> for all
// rows" and "Deny <rule> for all rows" over an editable rule field with a live count; the session
// grants and the CLI's suggestions (worded for the row's agent) behind "More".
// Once the editor is open, the green Allow runs the edited input too (it sends allow_edited), and
// "Allow for session" is disabled (a session grant would cover the proposed call, not the edit).
// While a cell blocks, JupyterLab holds back a Text widget's later value updates, so a reason
// kept in a synced trait would reach the kernel stale; a custom message is sent at once.
//
// While the request waits (model "pending"), the card is brought into view once, without
// taking the keyboard focus: scrollIntoView({block: "nearest"}) only if it is not visible,
// and not while the person is typing somewhere else (it waits until they stop).

import { kandevInputEditor } from "./input_editor";
import type { ApprovalPress } from "./messages";

function button(label: any, cls: any, title: any) {
  const b = document.createElement("button");
  b.className = `jupyter-widgets jupyter-button widget-button ${cls}`;
  b.textContent = label;
  if (title) b.title = title;
  return b;
}

function typingElsewhere(el: any) {
  const a = document.activeElement as HTMLElement | null;
  if (!a || a === document.body || el.contains(a)) return false;
  return a.isContentEditable || a.tagName === "TEXTAREA" || a.tagName === "INPUT";
}

function reveal(model: any, el: any) {
  const card = el.closest(".kandev-approval") || el;
  let done = false;
  const attempt = () => {
    if (done || !model.get("pending") || !card.isConnected) return;
    if (typingElsewhere(el)) return setTimeout(attempt, 500);
    const io = new IntersectionObserver((entries) => {
      io.disconnect();
      const entry = entries[entries.length - 1];
      done = true;
      if (entry && entry.intersectionRatio < 0.999) card.scrollIntoView({ block: "nearest", inline: "nearest" });
    });
    io.observe(card);
  };
  // after the output area has laid the card out
  requestAnimationFrame(() => setTimeout(attempt, 50));
}

// Keyboard answers on the focused card (issue 27): Enter or 1 allows once, 2 the session grant
// (else the whole tool), Escape or 3 opens the reason box (Enter there denies), as the CLI's
// 1/2/3. Only when the card itself has the focus, not one of its buttons or text boxes.
function keys(model: any, el: any, { allow, always, whole, reason, plan }: any) {
  el.dataset.requestId = model.get("request_id") || "";
  let card = el;
  const onKey = (e: any) => {
    if (e.target !== card && e.target !== el) return;
    if (!model.get("pending") || e.isComposing || e.ctrlKey || e.metaKey || e.altKey) return;
    let hit = null;
    if (e.key === "Enter" || e.key === "1") hit = allow;
    else if (e.key === "2" && !plan) hit = model.get("grant_label") ? always : model.get("tool_label") ? whole : null;
    else if (e.key === "Escape" || e.key === "3") hit = reason;
    if (!hit) return;
    e.preventDefault();
    e.stopPropagation(); // not JupyterLab's notebook shortcuts
    if (hit === reason) {
      reason.focus();
      reason.select();
    } else if (!hit.disabled) hit.click();
  };
  // A click on the card (not on a control) focuses it, after JupyterLab's notebook took the focus.
  const onClick = (e: any) => {
    if (!model.get("pending") || e.target.closest("button, input, textarea, select, a")) return;
    setTimeout(() => card.focus({ preventScroll: true }), 0);
  };
  let tries = 0;
  const attach = () => {
    if (!el.isConnected && tries++ < 50) return setTimeout(attach, 100); // not in the page yet
    card = el.closest(".kandev-approval") || el; // the VBox holds the controls once laid out
    if (!card.hasAttribute("tabindex")) card.tabIndex = 0;
    card.setAttribute("aria-keyshortcuts", "Enter 1 2 3 Escape");
    if (!card.title) card.title = "Enter allows once, Escape: a reason to deny; 1/2/3 as in Claude Code";
    card.addEventListener("keydown", onKey);
    card.addEventListener("click", onClick);
  };
  requestAnimationFrame(() => setTimeout(attach, 0));
  return () => {
    card.removeEventListener("keydown", onKey);
    card.removeEventListener("click", onClick);
  };
}

export default {
  render({ model, el }: any) {
    el.classList.add("kandev-approval-controls");
    const plan = model.get("plan");
    const row = document.createElement("div");
    row.className = "kandev-approval-buttons";
    const allow = button(plan ? "Approve plan" : "Allow once", "kandev-allow mod-success",
      plan ? "Approve the plan and leave plan mode" : "Allow this call only");
    // The session grants say their scope on the button (kandev_nb/policy/grants.py).
    const always = button(model.get("grant_label"), "kandev-allow-always",
      "Allow the calls this names until the CLI process ends (nothing is saved)");
    const whole = button(model.get("tool_label"), "kandev-allow-tool",
      "Allow every call of this tool until the CLI process ends (nothing is saved)");
    const deny = button(plan ? "Keep planning" : "Deny", `kandev-deny ${plan ? "mod-warning" : "mod-danger"}`,
      "Deny; the reason (Enter also denies) is sent to Claude");
    const reason = document.createElement("input");
    reason.type = "text";
    reason.className = "kandev-deny-reason widget-input";
    reason.placeholder = model.get("placeholder");
    const edit = button("Edit", "kandev-edit", "Edit the tool input, then allow");
    // The field editors (input_editor.ts): built when the kernel sends the input ("input_json").
    const editor = document.createElement("div");
    editor.className = "kandev-edit-box";
    editor.style.display = "none";
    let fields: any = null;
    let previewTimer: any = null;
    const edited = () => JSON.stringify(fields.read()); // throws with a message on bad JSON
    const sendEdited = () => {
      try {
        send({ action: "allow_edited", input: edited() });
      } catch (err: any) {
        error.textContent = err.message;
      }
    };
    const preview = () => { // the diff above follows the typing
      clearTimeout(previewTimer);
      previewTimer = setTimeout(() => {
        try {
          const text = edited();
          error.textContent = model.get("error");
          send({ action: "preview", input: text });
        } catch (err: any) {
          error.textContent = err.message;
        }
      }, 250);
    };
    const allowEdited = button("Allow edited", "kandev-allow-edited mod-warning", "Run the edited input");
    allowEdited.style.display = "none";
    const error = document.createElement("div");
    error.className = "kandev-approval-error";
    error.style.color = "var(--jp-error-color1, #cf222e)";
    // A plan: the CLI's own choices, each an allow that also sets the session's mode (setMode).
    const planChoices = plan
      ? [["Approve and auto-accept edits", "approve_accept_edits", "kandev-approve-accept-edits mod-success",
          "Leave plan mode; Claude Code may then edit files without asking"],
         ["Approve, keep asking", "approve_keep_asking", "kandev-approve-keep-asking",
          "Leave plan mode; each edit still asks you"]].map(([label, action, cls, title]) => {
          const pressed = { action } as ApprovalPress; // approve_accept_edits | approve_keep_asking
          const b = button(label, cls, title);
          b.addEventListener("click", () => send(pressed));
          return b;
        })
      : [];
    const fleetOf = () => {
      try {
        return JSON.parse(model.get("fleet") || "null");
      } catch (e) {
        return null;
      }
    };
    const fleet = plan ? null : fleetOf();
    row.append(...(plan ? planChoices : [allow]));
    if (!plan && !fleet && model.get("grant_label")) row.append(always);
    row.append(deny, reason);
    if (!plan) row.append(edit);
    let offered = [];
    try {
      offered = JSON.parse(model.get("suggestions") || "[]");
    } catch (e) {
      offered = [];
    }
    const saved = offered.map((s: any) => {
      const b = button(s.label, "kandev-allow-suggestion", "Allow, and let Claude Code save this rule");
      b.dataset.index = String(s.index);
      b.addEventListener("click", () => send({ action: "allow_suggestion", index: s.index }));
      return b;
    });
    const savedRow = document.createElement("div");
    savedRow.className = "kandev-approval-buttons kandev-suggestions";
    if (fleet && model.get("grant_label")) savedRow.append(always);
    if (!plan && model.get("tool_label")) savedRow.append(whole);
    savedRow.append(...saved);
    el.append(row);
    // A fleet's card: the rule for all rows, editable, with what it answers now (counted by the kernel).
    const allRow = document.createElement("div");
    allRow.className = "kandev-approval-buttons kandev-fleet-all";
    const allowAll = button("Allow for all rows", "kandev-fleet-allow-all mod-success",
      "Allow this row's call and every row's call the rule covers, now and later");
    const denyAll = button("Deny for all rows", "kandev-fleet-deny-all mod-danger",
      "Deny this row's call and every row's call the rule covers, now and later (the reason box's text is sent)");
    const count = document.createElement("span");
    count.className = "kandev-fleet-rule-count";
    const ruleBox = document.createElement("textarea");
    ruleBox.className = "kandev-fleet-rule widget-input";
    ruleBox.spellcheck = false;
    ruleBox.title = "The rule for all rows, in Claude Code's syntax (one a line); edit it before you click";
    const note = document.createElement("div");
    note.className = "kandev-fleet-rule-note";
    const more = button("More ▸", "kandev-fleet-more", "Grants for this row's agent, and Claude Code's suggestions");
    let previewTimer2: any = null;
    const drawFleet = () => {
      const f = fleetOf();
      if (!f) return;
      allowAll.textContent = f.allow_label;
      denyAll.textContent = f.deny_label;
      allowAll.classList.toggle("mod-warning", !!f.armed);
      count.textContent = f.count;
      if (document.activeElement !== ruleBox && ruleBox.value !== f.rule) ruleBox.value = f.rule;
      ruleBox.rows = Math.max(1, Math.min(6, (ruleBox.value.match(/\n/g) || []).length + 1));
      note.textContent = [f.error, f.too_broad ? `Too broad: ${f.too_broad}` : "", f.why].filter((t) => t).join(" · ");
      note.style.color = f.error || f.too_broad ? "var(--jp-warn-color1, #9a6700)" : "var(--jp-ui-font-color2, #57606a)";
      allowAll.dataset.ok = f.can_allow ? "1" : "";
      denyAll.dataset.ok = f.can_deny ? "1" : "";
    };
    if (fleet) {
      allow.textContent = "Allow (this row)";
      allow.title = "Allow this row's call only";
      allRow.append(allowAll, denyAll, count);
      el.append(allRow, ruleBox, note);
      if (savedRow.children.length) {
        savedRow.style.display = "none";
        more.addEventListener("click", () => {
          const open = savedRow.style.display === "none";
          savedRow.style.display = open ? "" : "none";
          more.textContent = open ? "More ▾" : "More ▸";
        });
        el.append(more, savedRow);
      }
      ruleBox.addEventListener("keydown", (e) => e.stopPropagation()); // not JupyterLab's shortcuts
      ruleBox.addEventListener("input", () => {
        clearTimeout(previewTimer2);
        previewTimer2 = setTimeout(() => send({ action: "rule_preview", rule: ruleBox.value }), 250);
      });
      allowAll.addEventListener("click", () => send({ action: "allow_all", rule: ruleBox.value }));
      denyAll.addEventListener("click", () => send({ action: "deny_all", rule: ruleBox.value, reason: reason.value }));
      drawFleet();
    } else if (savedRow.children.length) el.append(savedRow);
    el.append(editor, allowEdited, error);

    const send = (content: ApprovalPress) => {
      if (!model.get("pending")) return;
      model.send(content);
    };
    const denyNow = () => send({ action: "deny", reason: reason.value });
    const editing = () => editor.style.display !== "none";
    allow.addEventListener("click", () => (editing() ? sendEdited() : send({ action: "allow" })));
    always.addEventListener("click", () => send({ action: "allow_always" }));
    whole.addEventListener("click", () => send({ action: "allow_tool" }));
    deny.addEventListener("click", denyNow);
    reason.addEventListener("keydown", (e) => {
      e.stopPropagation(); // keep JupyterLab's notebook shortcuts out of the text box
      if (e.key === "Enter" && !e.isComposing) {
        e.preventDefault();
        denyNow();
      }
    });
    const showEditor = () => {
      const text = model.get("input_json");
      if (!text) return;
      if (editor.style.display === "none") {
        fields = kandevInputEditor(JSON.parse(text), preview);
        editor.replaceChildren(fields.el);
        editor.style.display = "";
        allowEdited.style.display = "";
        allow.textContent = "Allow edited";
        allow.title = "Run the edited input";
        always.title = "Not with an edited input: Allow edited runs it once";
        sync();
      }
    };
    edit.addEventListener("click", () => (model.get("input_json") ? showEditor() : send({ action: "edit" })));
    allowEdited.addEventListener("click", sendEdited);

    // A restart or shutdown of the kernel ends the turn: the CLI died with it, nothing was allowed.
    let ended = "";
    const manager = model.widget_manager;
    const kernel = manager && manager.kernel;
    const onStatus = (_kernel: any, status: any) => {
      if (ended || !model.get("pending")) return;
      if (status === "restarting" || status === "autorestarting") ended = "kernel restarted: this turn ended; nothing was allowed";
      else if (status === "dead") ended = "kernel stopped: this turn ended; nothing was allowed";
      if (!ended) return;
      el.classList.add("kandev-approval-ended");
      el.dataset.kandevEnded = status;
      sync();
    };
    if (kernel && kernel.statusChanged) kernel.statusChanged.connect(onStatus);

    const sync = () => {
      const off = !model.get("pending") || !!ended;
      for (const c of [allow, always, whole, deny, reason, edit, allowEdited, ...saved, ...planChoices]) c.disabled = off;
      for (const c of [ruleBox, more]) c.disabled = off;
      allowAll.disabled = off || !allowAll.dataset.ok || editing(); // the rule is for the call as asked
      denyAll.disabled = off || !denyAll.dataset.ok;
      if (fields) for (const c of fields.controls) c.disabled = off;
      if (editing()) for (const c of [always, whole, ...saved]) c.disabled = true; // they would allow the unedited call
      error.textContent = ended || model.get("error");
    };
    const onFleet = () => {
      drawFleet();
      sync();
    };
    model.on("change:pending", sync);
    model.on("change:error", sync);
    model.on("change:input_json", showEditor);
    model.on("change:fleet", onFleet);
    sync();
    reveal(model, el);
    const offKeys = keys(model, el, { allow, always, whole, reason, plan });
    return () => {
      if (kernel && kernel.statusChanged) kernel.statusChanged.disconnect(onStatus);
      offKeys();
      model.off("change:pending", sync);
      model.off("change:error", sync);
      model.off("change:input_json", showEditor);
      model.off("change:fleet", onFleet);
    };
  },
};
