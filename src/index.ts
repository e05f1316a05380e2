/**
 * kandev-nb's JupyterLab 4 / Notebook 7 extension (issue 37, first slice).
 *
 * - Settings "Claude (kandev-nb)" in the settings registry (schema/plugin.json), read into
 *   {@link IKandevNbSettings}. The kernel does not read them yet (a later slice).
 * - Commands, category "Claude" in the palette: "Insert a %%claude cell below" and
 *   "Ask Claude about this error" (also in a cell's context menu). Neither runs a cell.
 * - `%%claude` cell bodies highlighted as Markdown from page load, on every notebook, before any
 *   cell ran (what kandev_nb/notebook/cell_language.js does once `%load_ext kandev_nb` ran).
 *
 * The extension marks the page with `document.body.dataset.kandevNbExtension = VERSION`: the
 * kernel-injected fallback (cell_language.js) does nothing where that marker is set.
 */

import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { Cell, ICellModel, ICodeCellModel } from '@jupyterlab/cells';
import { INotebookModel, INotebookTracker, Notebook } from '@jupyterlab/notebook';
import { ISettingRegistry } from '@jupyterlab/settingregistry';

declare function require(name: string): any;

/** The extension's version: package.json's, which is also the Python package's. */
export const VERSION: string = require('../package.json').version;

/** The plugin id; its settings are `/lab/api/settings/kandev-nb:plugin`. */
export const PLUGIN_ID = 'kandev-nb:plugin';

/** The permission modes of kandev_nb.agent.permissions.MODES. */
export type PermissionMode = 'supervised' | 'plan' | 'acceptEdits' | 'autonomous';

/**
 * The user's settings for kandev-nb (schema/plugin.json), as the settings registry composes
 * them (defaults filled in).
 */
export interface IKandevNbSettings {
  /** The permission mode a %%claude cell starts in when it names none (`--mode`). Default "supervised". */
  defaultMode: PermissionMode;
  /** An approval card nobody answers: "wait" for a person, or "deny-after" denyAfterSeconds. Default "wait". */
  unansweredCard: 'wait' | 'deny-after';
  /** Seconds before an unanswered card is denied, with unansweredCard "deny-after". Default 300. */
  denyAfterSeconds: number;
  /** Browser notifications when a turn ends or waits while the tab is hidden. Default true. */
  notifications: boolean;
}

/** The settings' defaults, as in schema/plugin.json (used until the registry answers). */
export const DEFAULT_SETTINGS: IKandevNbSettings = {
  defaultMode: 'supervised',
  unansweredCard: 'wait',
  denyAfterSeconds: 300,
  notifications: true
};

/** The command ids. */
export namespace CommandIDs {
  export const insertCell = 'kandev-nb:insert-claude-cell';
  export const askAboutError = 'kandev-nb:ask-about-error';
}

/** The MIME type JupyterLab gives Markdown cells: a %%claude body is highlighted with it. */
export const PROMPT_MIME = 'text/x-ipythongfm';
const PROMPT_CELL = /^%%claude(\s|$)/;
const CATEGORY = 'Claude';
const TRACEBACK_LINES = 12;
const SOURCE_LINES = 30;

let current: IKandevNbSettings = { ...DEFAULT_SETTINGS };

/** The settings now (the defaults until the settings registry has answered). */
export function kandevNbSettings(): IKandevNbSettings {
  return current;
}

// --- %%claude bodies highlighted as Markdown ------------------------------------------------

interface IWatched {
  before: string;
  onChange: () => void;
}

/**
 * Give each code cell of `model` whose source starts with %%claude the Markdown MIME type, and
 * the earlier one back when it stops starting so; follow new cells, source edits and the
 * notebook's own resets (a kernel's language_info). Returns the function that stops it.
 */
export function highlightPrompts(model: INotebookModel): () => void {
  const watched = new Map<ICellModel, IWatched>();
  const apply = (cell: ICellModel, rec: IWatched): void => {
    const prompt = PROMPT_CELL.test(cell.sharedModel.getSource());
    if (cell.mimeType !== PROMPT_MIME) {
      rec.before = cell.mimeType;
    }
    if (prompt && cell.mimeType !== PROMPT_MIME) {
      cell.mimeType = PROMPT_MIME;
    } else if (!prompt && cell.mimeType === PROMPT_MIME) {
      cell.mimeType = rec.before || 'text/x-ipython';
    }
  };
  const watch = (): void => {
    const present = new Set<ICellModel>();
    for (let i = 0; i < model.cells.length; i++) {
      const cell = model.cells.get(i);
      present.add(cell);
      if (cell.type !== 'code' || watched.has(cell)) {
        continue;
      }
      const rec: IWatched = { before: cell.mimeType, onChange: () => apply(cell, rec) };
      cell.mimeTypeChanged.connect(rec.onChange);
      cell.sharedModel.changed.connect(rec.onChange);
      watched.set(cell, rec);
      apply(cell, rec);
    }
    for (const [cell, rec] of watched) {
      if (!present.has(cell)) {
        forget(cell, rec);
      }
    }
  };
  const forget = (cell: ICellModel, rec: IWatched): void => {
    if (!cell.isDisposed) {
      cell.mimeTypeChanged.disconnect(rec.onChange);
      cell.sharedModel.changed.disconnect(rec.onChange);
    }
    watched.delete(cell);
  };
  model.cells.changed.connect(watch);
  watch();
  return () => {
    model.cells.changed.disconnect(watch);
    for (const [cell, rec] of [...watched]) {
      forget(cell, rec);
    }
  };
}

function followNotebook(notebook: Notebook): void {
  let stop: (() => void) | null = null;
  const attach = (): void => {
    if (stop) {
      stop();
      stop = null;
    }
    if (notebook.model) {
      stop = highlightPrompts(notebook.model);
    }
  };
  notebook.modelChanged.connect(attach);
  notebook.disposed.connect(() => {
    if (stop) {
      stop();
      stop = null;
    }
  });
  attach();
}

// --- "Ask Claude about this error" ------------------------------------------------------------

/** ANSI escape sequences (colours of IPython's tracebacks), removed from the prompt. */
// eslint-disable-next-line no-control-regex
const ANSI = /\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)|\x1b[@-Z\\-_]/g;

/** `text` without ANSI escape sequences. */
export function stripAnsi(text: string): string {
  return text.replace(ANSI, '');
}

interface IErrorOutput {
  ename: string;
  evalue: string;
  traceback: string[];
}

/** The last error output of `cell` (a code cell), or null. */
function errorOf(cell: Cell | null | undefined): IErrorOutput | null {
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

// --- the plugin -------------------------------------------------------------------------------

/** Insert a code cell with `source` below cell `index` of `notebook`, make it active; no run. */
function insertBelow(notebook: Notebook, index: number, source: string): Cell | null {
  const model = notebook.model;
  if (!model) {
    return null;
  }
  const at = Math.min(index + 1, model.cells.length);
  model.sharedModel.insertCell(at, { cell_type: 'code', source, metadata: {} });
  notebook.activeCellIndex = at;
  notebook.deselectAll();
  return notebook.activeCell;
}

const plugin: JupyterFrontEndPlugin<void> = {
  id: PLUGIN_ID,
  description: 'Claude Code from notebook cells: %%claude highlighting, commands and settings.',
  autoStart: true,
  requires: [INotebookTracker],
  optional: [ICommandPalette, ISettingRegistry],
  activate: (
    app: JupyterFrontEnd,
    tracker: INotebookTracker,
    palette: ICommandPalette | null,
    settingRegistry: ISettingRegistry | null
  ) => {
    document.body.dataset.kandevNbExtension = VERSION;

    tracker.widgetAdded.connect((_sender, panel) => followNotebook(panel.content));
    tracker.forEach(panel => followNotebook(panel.content));

    if (settingRegistry) {
      settingRegistry
        .load(PLUGIN_ID)
        .then(settings => {
          const read = (): void => {
            current = { ...DEFAULT_SETTINGS, ...(settings.composite as Partial<IKandevNbSettings>) };
          };
          settings.changed.connect(read);
          read();
        })
        .catch(reason => console.error('kandev-nb: the settings could not be loaded.', reason));
    }

    /** The cell a command is about: the right-clicked one (context menu), else the active one. */
    const targetCell = (args: any): { notebook: Notebook; cell: Cell; index: number } | null => {
      const panel = tracker.currentWidget;
      if (!panel) {
        return null;
      }
      const notebook = panel.content;
      let cell: Cell | null = notebook.activeCell;
      if (args && args.fromContextMenu) {
        const node = app.contextMenuHitTest(n => n.classList.contains('jp-Cell'));
        const hit = node ? notebook.widgets.find(w => w.node === node) : undefined;
        if (hit) {
          cell = hit;
        }
      }
      if (!cell) {
        return null;
      }
      return { notebook, cell, index: notebook.widgets.indexOf(cell) };
    };

    app.commands.addCommand(CommandIDs.insertCell, {
      label: 'Insert a %%claude cell below',
      caption: 'Insert a code cell starting with %%claude below the active cell (it is not run)',
      isEnabled: () => tracker.currentWidget !== null,
      execute: async args => {
        const panel = tracker.currentWidget;
        if (!panel) {
          return;
        }
        const target = targetCell(args);
        const notebook = panel.content;
        const cell = insertBelow(notebook, target ? target.index : notebook.activeCellIndex, '%%claude\n');
        if (!cell) {
          return;
        }
        await cell.ready;
        // The modal palette gives the focus back to the notebook when it closes, after this
        // command started, and a focused notebook is in command mode: enter edit mode after that.
        app.shell.activateById(panel.id);
        await new Promise<void>(resolve => setTimeout(() => requestAnimationFrame(() => resolve()), 0));
        if (notebook.activeCell !== cell || cell.isDisposed) {
          return;
        }
        notebook.mode = 'edit';
        if (cell.editor) {
          cell.editor.setCursorPosition({ line: 1, column: 0 });
          cell.editor.focus();
        }
      }
    });

    app.commands.addCommand(CommandIDs.askAboutError, {
      label: 'Ask Claude about this error',
      caption: 'Insert a %%claude cell below that asks about this cell’s error (it is not run)',
      isEnabled: args => {
        const target = targetCell(args);
        return target !== null && errorOf(target.cell) !== null;
      },
      execute: async args => {
        const target = targetCell(args);
        const error = target ? errorOf(target.cell) : null;
        if (!target || !error) {
          return;
        }
        const model = target.cell.model as ICodeCellModel;
        const source = errorPrompt(error, target.index, model.executionCount, model.sharedModel.getSource());
        const cell = insertBelow(target.notebook, target.index, source);
        if (cell) {
          await cell.ready;
          target.notebook.scrollToItem(target.notebook.activeCellIndex).catch(() => undefined);
        }
      }
    });

    if (palette) {
      palette.addItem({ command: CommandIDs.insertCell, category: CATEGORY });
      palette.addItem({ command: CommandIDs.askAboutError, category: CATEGORY });
    }
  }
};

export default plugin;
