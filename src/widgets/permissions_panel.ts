function render({ model, el }: any) {
  const draw = () => {
    el.innerHTML = model.get("body");
    for (const b of el.querySelectorAll("button.kandev-revoke")) {
      b.addEventListener("click", () => {
        b.disabled = true;
        model.send({ action: "revoke", rule: b.dataset.rule });
      });
    }
  };
  model.on("change:body", draw);
  draw();
}
export default { render };
