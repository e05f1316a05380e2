// The %%claude cell body reads as a prompt (issue 27 point 8): bundled into the
// bridge's module, it gives each code cell whose source starts with %%claude the MIME type
// JupyterLab uses for Markdown cells ("text/x-ipythongfm"). The cell's CodeMirror editor follows
// its model's mimeType (per cell), so the body is highlighted as Markdown (fenced code by its
// language), not as Python. Nothing is saved: nbformat keeps no per-cell MIME type, and the
// kernel still gets the cell's source unchanged.
//
// The notebook resets every code cell's mimeType when the kernel's language_info arrives
// (a restart, a kernel change): the mimeTypeChanged signal puts Markdown back on %%claude cells.
// A cell that stops starting with %%claude gets its earlier type back. This runs only in a tab
// whose kernel has kandev_nb loaded (the bridge's widget manager). kandev-nb's JupyterLab /
// Notebook 7 extension (src/index.ts, issue 37) does the same from page load and marks the page
// with document.body.dataset.kandevNbExtension: where that marker is set, this fallback does nothing.

const KANDEV_PROMPT_MIME = "text/x-ipythongfm";
const KANDEV_PROMPT_CELL = /^%%claude(\s|$)/;

export function kandevCellLanguage(notebook: any) {
  if (typeof document !== "undefined" && document.body && document.body.dataset.kandevNbExtension) return null;
  const cells = notebook && notebook.cells;
  if (!cells || typeof cells.get !== "function" || !cells.changed) return null;
  const watched = new Map(); // cell model -> {before, onChange}
  const apply = (cell: any, rec: any) => {
    const prompt = KANDEV_PROMPT_CELL.test(cell.sharedModel.getSource());
    if (cell.mimeType !== KANDEV_PROMPT_MIME) rec.before = cell.mimeType;
    if (prompt && cell.mimeType !== KANDEV_PROMPT_MIME) cell.mimeType = KANDEV_PROMPT_MIME;
    else if (!prompt && cell.mimeType === KANDEV_PROMPT_MIME) cell.mimeType = rec.before || "text/x-ipython";
  };
  const watch = () => {
    for (let i = 0; i < cells.length; i++) {
      const cell = cells.get(i);
      if (!cell || cell.type !== "code" || watched.has(cell) || !cell.mimeTypeChanged) continue;
      const rec: any = { before: cell.mimeType };
      rec.onChange = () => apply(cell, rec);
      cell.mimeTypeChanged.connect(rec.onChange);
      cell.sharedModel.changed.connect(rec.onChange);
      watched.set(cell, rec);
      apply(cell, rec);
    }
  };
  cells.changed.connect(watch);
  watch();
  return () => {
    cells.changed.disconnect(watch);
    for (const [cell, rec] of watched) {
      cell.mimeTypeChanged.disconnect(rec.onChange);
      cell.sharedModel.changed.disconnect(rec.onChange);
    }
    watched.clear();
  };
}
