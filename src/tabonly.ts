/**
 * Outputs that only mean something while their kernel runs (a turn's buttons: a widget whose
 * output metadata has `kandev_nb/tab_only`), hidden in a notebook reopened with a new kernel.
 *
 * There the ipywidgets renderer finds no model for them and writes "Error displaying widget:
 * model not found" in their place; this hides such an output, and only when the kernel marked it
 * tab-only (an error of any other widget stays as JupyterLab shows it).
 */

import { CodeCell } from '@jupyterlab/cells';
import { Notebook } from '@jupyterlab/notebook';

/** The output metadata key the kernel sets (kandev_nb.notebook.turn_actions.TAB_ONLY). */
export const TAB_ONLY = 'kandev_nb/tab_only';

const GONE = 'Error displaying widget: model not found';
const HIDDEN_CLASS = 'kandev-tab-only-gone';

/** Hide `notebook`'s tab-only outputs whose widget is gone; returns the function that stops it. */
export function hideGoneTabOnly(notebook: Notebook): () => void {
  let scheduled = false;
  const sweep = (): void => {
    scheduled = false;
    for (const widget of notebook.widgets) {
      if (!(widget instanceof CodeCell) || widget.isDisposed) {
        continue;
      }
      const outputs = widget.model.outputs;
      const children = widget.outputArea.widgets;
      for (let i = 0; i < outputs.length && i < children.length; i++) {
        const node = children[i].node;
        if (node.classList.contains(HIDDEN_CLASS) || outputs.get(i).metadata[TAB_ONLY] !== true) {
          continue;
        }
        if ((node.textContent ?? '').includes(GONE)) {
          node.classList.add(HIDDEN_CLASS);
        }
      }
    }
  };
  const observer = new MutationObserver(() => {
    if (!scheduled) {
      scheduled = true;
      requestAnimationFrame(sweep);
    }
  });
  observer.observe(notebook.node, { childList: true, subtree: true, characterData: true });
  sweep();
  return () => observer.disconnect();
}
