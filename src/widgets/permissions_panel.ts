// The permissions panel (PermissionsPanel in kandev_nb/notebook/permissions_panel.py): its body is the
// kernel's HTML; a revoke button sends one RevokePress (kandev_nb/notebook/widget_messages.py).

import type { RevokePress } from "./messages";

function render({ model, el }: any) {
  const draw = () => {
    el.innerHTML = model.get("body");
    for (const b of el.querySelectorAll("button.kandev-revoke")) {
      b.addEventListener("click", () => {
        b.disabled = true;
        model.send({ action: "revoke", rule: b.dataset.rule } satisfies RevokePress);
      });
    }
  };
  model.on("change:body", draw);
  draw();
}
export default { render };
