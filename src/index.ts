/**
 * kandev-nb's JupyterLab 4 / Notebook 7 extension (issue 37).
 *
 * - Settings "Claude (kandev-nb)" in the settings registry (schema/plugin.json), read into
 *   {@link IKandevNbSettings} and sent to every kernel with kandev_nb loaded (the kernel takes
 *   them as its defaults; `kandev_nb.configure(...)` in a kernel wins there).
 * - The channel to every kernel of the server ({@link KernelChannels}, src/kernels.ts), the
 *   Claude panel in the right sidebar (src/panel.ts) and JupyterLab's own notifications for
 *   every waiting approval (src/notifications.ts).
 * - Commands, category "Claude" in the palette: "Insert a %%claude cell below", "Ask Claude
 *   about this error" (also in a cell's context menu), "Open the Claude panel" (Accel Shift A),
 *   "Allow the oldest waiting approval" (Accel Alt Enter), "Deny the oldest waiting approval"
 *   (Accel Alt Backspace), "Stop every running turn". The shortcuts are in schema/plugin.json
 *   (Settings > Settings Editor > Keyboard Shortcuts changes them); none is a JupyterLab 4 or
 *   Notebook 7 default (tests/extension/test_build.py checks it).
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
import { ICommandPalette, Notification } from '@jupyterlab/apputils';
import { Cell, ICellModel, ICodeCellModel } from '@jupyterlab/cells';
import { INotebookModel, INotebookTracker, Notebook, NotebookPanel } from '@jupyterlab/notebook';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { LabIcon } from '@jupyterlab/ui-components';

import { decorateErrors, errorOf, errorPrompt } from './errors';
import { KernelChannels } from './kernels';
import { ApprovalNotifications, allowable } from './notifications';
import { ClaudePanel, PANEL_ID } from './panel';
import { hideGoneTabOnly } from './tabonly';

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
  export const openPanel = 'kandev-nb:open-panel';
  export const allowOldest = 'kandev-nb:allow-oldest';
  export const denyOldest = 'kandev-nb:deny-oldest';
  export const stopAll = 'kandev-nb:stop-all';
}

/** The Claude panel's icon (a speech bubble with a spark). */
export const claudeIcon = new LabIcon({
  name: 'kandev-nb:claude',
  svgstr:
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"><g class="jp-icon3" fill="#616161">' +
    '<path d="M4 3h16a2 2 0 0 1 2 2v10a2 2 0 0 1-2 2H9l-5 4v-4a2 2 0 0 1-2-2V5a2 2 0 0 1 2-2zm8 2.5-1.2 3.3L7.5 10l3.3 1.2L12 14.5l1.2-3.3 3.3-1.2-3.3-1.2z"/>' +
    '</g></svg>'
});

/** The MIME type JupyterLab gives Markdown cells: a %%claude body is highlighted with it. */
export const PROMPT_MIME = 'text/x-ipythongfm';
const PROMPT_CELL = /^%%claude(\s|$)/;
const CATEGORY = 'Claude';

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

function followNotebook(notebook: Notebook, ask: (cell: Cell) => void): void {
  let stops: (() => void)[] = [];
  const stop = (): void => {
    stops.forEach(fn => fn());
    stops = [];
  };
  const attach = (): void => {
    stop();
    if (notebook.model) {
      stops = [highlightPrompts(notebook.model), decorateErrors(notebook, ask), hideGoneTabOnly(notebook)];
    }
  };
  notebook.modelChanged.connect(attach);
  notebook.disposed.connect(stop);
  attach();
}

export { errorPrompt, stripAnsi } from './errors';

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

/** Open notebook `path` and select the cell whose execution count is `cell` (if found). */
async function openAt(app: JupyterFrontEnd, tracker: INotebookTracker, path: string, cell: number | null): Promise<void> {
  await app.commands.execute('docmanager:open', { path });
  const nb = tracker.find(p => p.context.path === path);
  if (!nb || cell === null) {
    return;
  }
  await nb.context.ready;
  const notebook = nb.content;
  const index = notebook.widgets.findIndex(
    w => w.model.type === 'code' && (w.model as ICodeCellModel).executionCount === cell
  );
  if (index >= 0) {
    notebook.activeCellIndex = index;
    notebook.deselectAll();
    await notebook.scrollToItem(index);
  }
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

    // the button on an error output runs the command on its own cell
    const askFor = (notebook: Notebook) => (cell: Cell) =>
      void app.commands.execute(CommandIDs.askAboutError, { cellIndex: notebook.widgets.indexOf(cell) });
    tracker.widgetAdded.connect((_sender, panel) => followNotebook(panel.content, askFor(panel.content)));
    tracker.forEach(panel => followNotebook(panel.content, askFor(panel.content)));

    const channels = new KernelChannels(app, () => ({ ...current }), VERSION);
    const panel = new ClaudePanel(channels, (path, cell) => void openAt(app, tracker, path, cell));
    panel.title.icon = claudeIcon;
    app.shell.add(panel, 'right', { rank: 650, type: 'Claude' });
    const showInPanel = (kernelId: string, id: string): void => {
      app.shell.activateById(PANEL_ID);
      requestAnimationFrame(() => panel.reveal(kernelId, id));
    };
    const notifications = new ApprovalNotifications(channels, showInPanel, () => current.notifications);
    // kernel-side toasts (kandev_nb/notebook/notify.js) leave a kernel to the extension when it speaks for it
    (window as any).__kandevNbLab = {
      version: VERSION,
      handles: (kernelId: string) => current.notifications && channels.handles(kernelId),
      // the notebook bridge (kandev_nb/notebook/bridge.js) reaches its tab's document here
      documentFor: (kernelId: string) => {
        const nb = tracker.find(p => p.sessionContext.session?.kernel?.id === kernelId);
        return nb && nb.context.model ? { path: nb.context.path, model: nb.context.model } : null;
      }
    };

    const followKernel = (nb: NotebookPanel): void => {
      // a restart or shutdown asked from this page: the notebook's own connection says it first
      nb.sessionContext.statusChanged.connect((context, status) => {
        const id = context.session?.kernel?.id;
        if (id && (status === 'restarting' || status === 'autorestarting' || status === 'dead')) {
          channels.kernelEnded(id);
        }
      });
    };
    tracker.widgetAdded.connect((_sender, nb) => followKernel(nb));
    tracker.forEach(nb => followKernel(nb));

    if (settingRegistry) {
      settingRegistry
        .load(PLUGIN_ID)
        .then(settings => {
          const read = (): void => {
            current = { ...DEFAULT_SETTINGS, ...(settings.composite as Partial<IKandevNbSettings>) };
            channels.sendSettings();
            notifications.refresh();
          };
          settings.changed.connect(read);
          read();
        })
        .catch(reason => console.error('kandev-nb: the settings could not be loaded.', reason));
    }

    app.commands.addCommand(CommandIDs.openPanel, {
      label: 'Open the Claude panel',
      caption: 'Waiting approvals, running turns and sessions of every kernel with kandev_nb loaded',
      execute: () => app.shell.activateById(PANEL_ID)
    });
    const answerOldest = async (action: 'allow' | 'deny'): Promise<void> => {
      const oldest = panel.oldest();
      if (!oldest) {
        Notification.info('No approval is waiting.', { autoClose: 4000 });
        return;
      }
      const { entry, item } = oldest;
      // An Allow binds to what the person saw: only a notification on screen whose one line is
      // the whole request; anything else is looked at in the panel and allowed there.
      if (action === 'allow' && !(allowable(item) && notifications.showing(entry.id, item.id))) {
        showInPanel(entry.id, item.id);
        Notification.info('Look at it in the Claude panel, then allow it there.', { autoClose: 6000 });
        return;
      }
      const digest = action === 'allow' ? item.line_digest : null;
      const result = await channels.answer(entry.id, { id: item.id, action, digest, reason: '' });
      if (!result.ok) {
        Notification.error(`kandev-nb: not answered: ${result.error}`, { autoClose: 8000 });
      }
    };
    app.commands.addCommand(CommandIDs.allowOldest, {
      label: 'Allow the oldest waiting approval',
      caption:
        'Allow once the approval that has waited longest, when its notification shows all of it (else it opens the Claude panel at it)',
      isEnabled: () => panel.oldest() !== null,
      execute: () => answerOldest('allow')
    });
    app.commands.addCommand(CommandIDs.denyOldest, {
      label: 'Deny the oldest waiting approval',
      isEnabled: () => panel.oldest() !== null,
      execute: () => answerOldest('deny')
    });
    app.commands.addCommand(CommandIDs.stopAll, {
      label: 'Stop every running turn',
      caption: 'Interrupt every running %%claude turn and fleet of every kernel (the sessions stay; a fleet stops as its Stop all)',
      execute: () => channels.stop(null)
    });

    /** The cell a command is about: the right-clicked one (context menu), else the active one. */
    const targetCell = (args: any): { notebook: Notebook; cell: Cell; index: number } | null => {
      const panel = tracker.currentWidget;
      if (!panel) {
        return null;
      }
      const notebook = panel.content;
      let cell: Cell | null = notebook.activeCell;
      if (args && typeof args.cellIndex === 'number' && notebook.widgets[args.cellIndex]) {
        cell = notebook.widgets[args.cellIndex]; // the button on the cell's error output
      } else if (args && args.fromContextMenu) {
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
      for (const command of [
        CommandIDs.insertCell,
        CommandIDs.askAboutError,
        CommandIDs.openPanel,
        CommandIDs.allowOldest,
        CommandIDs.denyOldest,
        CommandIDs.stopAll
      ]) {
        palette.addItem({ command, category: CATEGORY });
      }
    }
  }
};

export default plugin;
