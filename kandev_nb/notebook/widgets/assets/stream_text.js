// StreamText view loader. The Markdown renderer lives in the KandevLib widget's module
// (sent once per kernel); this stub waits for it and mounts the streaming view.
const L = () => globalThis.__kandevNb;
async function lib(model) {
  if (L()) return L();
  const id = model.get("lib");
  try { if (id && model.widget_manager) await model.widget_manager.get_model(id); } catch (e) {}
  for (let i = 0; i < 500 && !L(); i++) await new Promise((r) => setTimeout(r, 20));
  return L();
}
export default {
  async render({ model, el }) {
    const k = await lib(model);
    if (k) return k.mount(model, el);
    el.textContent = "(kandev_nb: renderer not loaded)";
  },
};
