// The footer buttons of a finished turn (TurnActions in kandev_nb/notebook/turn_actions.py): each
// click is one TurnPress message (kandev_nb/notebook/widget_messages.py).

import type { TurnPress } from "./messages";
function button(label: any, cls: any, title: any, onClick: any) {
  const b = document.createElement("button");
  b.className = `jupyter-widgets jupyter-button widget-button ${cls}`;
  b.textContent = label;
  b.title = title;
  b.addEventListener("click", onClick);
  return b;
}
function render({ model, el }: any) {
  const draw = () => {
    el.replaceChildren();
    const row = document.createElement("div");
    row.className = "kandev-turn-actions-row";
    const info = document.createElement("span");
    info.className = "kandev-turn-number";
    info.textContent = model.get("info");
    row.appendChild(info);
    const send = (content: TurnPress) => model.send(content);
    if (model.get("failed")) {
      row.appendChild(button("Retry", "kandev-retry", "Put a %%claude --retry copy of this cell below",
        () => send({ action: "retry" })));
    }
    row.appendChild(button(model.get("permissions_open") ? "Hide permissions" : "Permissions",
      "kandev-permissions-toggle", "What may run unasked in this session; revoke a session grant",
      () => send({ action: "permissions" })));
    row.appendChild(button("Send again", "kandev-send-again", "Put a copy of this cell below (run it with Shift+Enter)",
      () => send({ action: "send_again" })));
    if (model.get("can_undo")) {
      const u = button("Undo this turn's file changes", "kandev-undo",
        "Restore the files this turn (and later turns) changed",
        () => { u.disabled = true; send({ action: "undo" }); });
      u.disabled = model.get("undone");
      row.appendChild(u);
    }
    for (const r of JSON.parse(model.get("restores") || "[]")) {
      const b = button(r.label, "kandev-restore", "Put the deleted cell back",
        () => { b.disabled = true; send({ action: "restore", id: r.id }); });
      b.disabled = !!r.done;
      row.appendChild(b);
    }
    el.appendChild(row);
    if (model.get("message")) {
      const m = document.createElement("div");
      m.className = "kandev-turn-actions-message";
      m.textContent = model.get("message");
      el.appendChild(m);
    }
  };
  const traits = ["info", "failed", "can_undo", "undone", "restores", "message", "permissions_open"];
  for (const t of traits) model.on(`change:${t}`, draw);
  draw();
}
export default { render };
