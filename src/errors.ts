/**
 * "Ask Claude about this error": the prompt a %%claude cell cites a failed cell with, and the
 * button on the error output itself (the command also sits in the palette and the cell's
 * context menu: src/index.ts).
 */

import { Cell, CodeCell, ICodeCellModel } from '@jupyterlab/cells';
import { Notebook } from '@jupyterlab/notebook';

const TRACEBACK_LINES = 12;
const SOURCE_LINES = 30;
const BUTTON_CLASS = 'kandev-ask-error';

/** ANSI escape sequences (colours of IPython's tracebacks), removed from the prompt. */
// eslint-disable-next-line no-control-regex
const ANSI = /\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)|\x1b[@-Z\\-_]/g;

/** `text` without ANSI escape sequences. */
export function stripAnsi(text: string): string {
  return text.replace(ANSI, '');
}

export interface IErrorOutput {
  ename: string;
  evalue: string;
  traceback: string[];
}

/** The last error output of `cell` (a code cell), or null. */
export function errorOf(cell: Cell | null | undefined): IErrorOutput | null {
  if (!cell || cell.model.type !== 'code') {
    return null;
  }
  const outputs = (cell.model as ICodeCellModel).outputs;
  for (let i = outputs.length - 1; i >= 0; i--) {
    const output = outputs.get(i);
    if (output.type === 'error') {
      const json = output.toJSON() as any;
      return {
        ename: String(json.ename ?? ''),
        evalue: String(json.evalue ?? ''),
        traceback: Array.isArray(json.traceback) ? json.traceback.map(String) : []
      };
    }
  }
  return null;
}

/** The %%claude cell source that asks about `error` of cell number `index` (0-based). */
export function errorPrompt(
  error: IErrorOutput,
  index: number,
  executionCount: number | null,
  source: string
): string {
  const where =
    executionCount !== null && executionCount !== undefined
      ? `Cell [${executionCount}] (cell ${index + 1} of the notebook)`
      : `Cell ${index + 1} of the notebook`;
  const evalue = stripAnsi(error.evalue);
  const ename = stripAnsi(error.ename);
  const lines = stripAnsi(error.traceback.join('\n'))
    .split('\n')
    .map(line => line.replace(/\s+$/, ''));
  while (lines.length && !lines[lines.length - 1]) {
    lines.pop();
  }
  const tail = lines.slice(-TRACEBACK_LINES);
  const code = source.split('\n');
  const shown = code.slice(0, SOURCE_LINES).join('\n') + (code.length > SOURCE_LINES ? '\n...' : '');
  const parts = [
    '%%claude',
    `${where} raised ${ename}${evalue ? `: ${evalue}` : ''}`,
    '',
    'The cell:',
    '```python',
    shown,
    '```',
    '',
    `The last lines of the traceback:`,
    '```text',
    ...tail,
    '```',
    '',
    'Why does it fail, and how do I fix it?'
  ];
  return parts.join('\n');
}


/**
 * Put an "Ask Claude about this error" button under every error output of `notebook`'s code
 * cells, now and as outputs change; `ask(cell)` runs when one is clicked. Returns the function
 * that stops it.
 */
export function decorateErrors(notebook: Notebook, ask: (cell: Cell) => void): () => void {
  const watched = new Set<CodeCell>();
  const decorate = (cell: CodeCell): void => {
    const outputs = cell.model.outputs;
    const area = cell.outputArea;
    // rows sit between the output area's children (not inside them: their layout is JupyterLab's)
    area.node.querySelectorAll(`.${BUTTON_CLASS}-row`).forEach(row => row.remove());
    for (let i = 0; i < outputs.length && i < area.widgets.length; i++) {
      if (outputs.get(i).type !== 'error') {
        continue;
      }
      const row = document.createElement('div');
      row.className = `${BUTTON_CLASS}-row`;
      const button = document.createElement('button');
      button.className = `${BUTTON_CLASS} jp-Button`;
      button.textContent = 'Ask Claude about this error';
      button.title = 'Insert a %%claude cell below that cites this cell and its error (it is not run)';
      button.onclick = event => {
        event.stopPropagation();
        ask(cell);
      };
      row.appendChild(button);
      area.widgets[i].node.after(row);
    }
  };
  const later = (cell: CodeCell) => (): void => {
    requestAnimationFrame(() => {
      if (!cell.isDisposed) {
        decorate(cell);
      }
    });
  };
  const follow = (): void => {
    for (const widget of notebook.widgets) {
      if (widget instanceof CodeCell && !watched.has(widget)) {
        watched.add(widget);
        const redo = later(widget);
        widget.model.outputs.changed.connect(redo);
        widget.disposed.connect(() => watched.delete(widget));
        redo();
      }
    }
  };
  const onCells = (): void => {
    requestAnimationFrame(follow);
  };
  notebook.model?.cells.changed.connect(onCells);
  follow();
  return () => notebook.model?.cells.changed.disconnect(onCells);
}
