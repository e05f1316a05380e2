/**
 * JupyterLab's own notifications for every waiting approval and question of every kernel
 * (`Notification` from @jupyterlab/apputils; no server flag).
 *
 * Each names the notebook, the cell, the tool and the time it has waited, and shows the one
 * line of the request the kernel computed (`line`). It offers Allow only when that line is
 * the whole payload (`complete`), sending the line's digest, which the kernel checks; else
 * Show (the Claude panel, which shows all of it) and Deny. JupyterLab cuts a notification's
 * message at 140 characters: a line offered for Allow is never cut (the head is).
 */

import { Notification } from '@jupyterlab/apputils';

import { IKernelEntry, KernelChannels } from './kernels';
import { Waiting } from './messages';

/** JupyterLab cuts a notification's message past this many characters. */
const MESSAGE_CHARS = 138;

/** Milliseconds from retiring a notification to taking it out of Lab's notification list. */
export const RETIRE_MS = 400;

/**
 * Take notification `id` off the screen for good, its last words `message`, with no buttons.
 *
 * Lab's toasts (react-toastify) apply `Notification.update` in a timer of their own; an
 * update whose timer runs after a dismissal but before React renders it puts the toast back.
 * On a busy page (a 1,000-row fleet's board, the main thread 98% busy) the 5-second update
 * and an answer's (or a reminder's) dismissal met that way, and toasts whose Allow answered
 * nothing stayed on screen after the fleet ended. So the last change is itself an update,
 * applied after any earlier one (timers run in order): no buttons, closing at once; the
 * dismissal, which clears Lab's notification list, follows.
 */
export function retire(id: string, message: string): void {
  Notification.update({ id, message, type: 'default', autoClose: 1, actions: [] });
  window.setTimeout(() => Notification.dismiss(id), RETIRE_MS);
}

/** m:ss (or "n s") of `seconds`. */
export function clock(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  return s >= 60 ? `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}` : `${s} s`;
}

/** The last part of a path ("a/b/c.ipynb" -> "c.ipynb"). */
export function basename(path: string | null | undefined): string {
  return path ? path.split('/').pop() || path : '';
}

/** Seconds `item` has waited now: what the kernel said plus the time since it said it. */
export function waited(item: Waiting, entry: IKernelEntry): number {
  return item.age_s + (Date.now() - entry.received) / 1000;
}

/** Is the one line shown the whole payload (a notification may offer Allow)? */
export function allowable(item: Waiting): boolean {
  return !item.question && item.complete;
}

/** "notebook.ipynb · In [3]: Claude wants to use Bash" (row for a fleet's). */
export function headText(item: Waiting, entry: IKernelEntry): string {
  const where = [
    basename(entry.state?.notebook ?? entry.path) || 'a notebook',
    item.cell !== null && item.cell !== undefined ? `In [${item.cell}]` : null,
    item.row || null
  ]
    .filter(Boolean)
    .join(' · ');
  const verb = item.question ? 'Claude asks' : `Claude wants to use ${item.tool}`;
  return `${item.reminded ? 'Still waiting — ' : ''}${where}: ${verb}`;
}

/** The notification's message, at most 140 characters; a line offered for Allow is whole. */
export function message(item: Waiting, entry: IKernelEntry): string {
  let head = `⏳ ${headText(item, entry)} (waiting ${clock(waited(item, entry))}) — `;
  if (allowable(item) && head.length + item.line.length > MESSAGE_CHARS) {
    const keep = Math.max(0, MESSAGE_CHARS - item.line.length - 1);
    head = '…' + head.slice(head.length - keep);
    return head + item.line;
  }
  const room = Math.max(24, MESSAGE_CHARS - head.length);
  const what = item.line.length > room ? '…' + item.line.slice(item.line.length - room + 1) : item.line;
  return head + what;
}

/**
 * The one notification of a fleet's waiting rows: "⏳ fleet.ipynb · In [2] · fleet triage:
 * 3 rows wait for you (the oldest waiting 0:12)". It shows no row whole, so it offers Show (the
 * Claude panel, at the oldest row), never Allow or Deny.
 */
export function fleetMessage(rows: Waiting[], entry: IKernelEntry): string {
  const fleet = entry.state?.fleets.find(f => f.id === rows[0]?.fleet);
  const where = [
    basename(entry.state?.notebook ?? entry.path) || 'a notebook',
    fleet?.cell !== null && fleet?.cell !== undefined ? `In [${fleet.cell}]` : null,
    fleet ? `fleet ${fleet.name ?? '(unnamed)'}` : 'a fleet'
  ]
    .filter(Boolean)
    .join(' · ');
  const oldest = Math.max(...rows.map(row => waited(row, entry)));
  const reminded = rows.some(row => row.reminded) ? 'Still waiting — ' : '';
  const count = rows.length === 1 ? '1 row waits' : `${rows.length} rows wait`;
  return `⏳ ${reminded}${where}: ${count} for you (the oldest waiting ${clock(oldest)})`;
}

interface IShown {
  id: string;
  kernel: string;
  key: string;
  /** What it shows now (its last words when it is retired). */
  text: string;
  /** A fleet's notification: how many of its rows wait. */
  rows?: number;
}

/**
 * Keeps one JupyterLab notification per waiting approval of `channels`, and one per fleet for
 * its waiting rows (a thousand-row fleet raises one, not hundreds), updated every 5 s (the
 * time it waited) and retired ({@link retire}) when the approval is answered or its kernel ends.
 */
export class ApprovalNotifications {
  constructor(
    private readonly channels: KernelChannels,
    private readonly show: (kernelId: string, id: string) => void,
    private enabled: () => boolean
  ) {
    channels.changed.connect(() => this.draw(), this);
    this.timer = window.setInterval(() => this.draw(true), 5000);
  }

  /** Is a notification of approval `id` of kernel `kernelId` on screen now (one line, whole or not)? */
  showing(kernelId: string, id: string): boolean {
    const shown = this.shown.get(`${kernelId}:${id}`);
    return !!shown && this.enabled() && Notification.manager.has(shown.id);
  }

  /** Draw again (after the notifications setting changed). */
  refresh(): void {
    this.draw();
  }

  dispose(): void {
    window.clearInterval(this.timer);
    for (const shown of this.shown.values()) {
      retire(shown.id, shown.text);
    }
    this.shown.clear();
  }

  private draw(tick = false): void {
    const live = new Set<string>();
    if (this.enabled()) {
      for (const entry of this.channels.entries()) {
        const fleets = new Map<string, Waiting[]>();
        for (const item of entry.state?.waiting ?? []) {
          if (item.fleet) {
            fleets.set(item.fleet, [...(fleets.get(item.fleet) ?? []), item]);
            continue;
          }
          const key = `${entry.id}:${item.id}`;
          live.add(key);
          this.upsert(key, entry, item, tick);
        }
        for (const [fleet, rows] of fleets) {
          const key = `${entry.id}:fleet:${fleet}`;
          live.add(key);
          this.upsertFleet(key, entry, rows, tick);
        }
      }
    }
    for (const [key, shown] of this.shown) {
      if (!live.has(key)) {
        retire(shown.id, shown.text);
        this.shown.delete(key);
      }
    }
  }

  private upsert(key: string, entry: IKernelEntry, item: Waiting, tick: boolean): void {
    const text = message(item, entry);
    const version = `${item.id}:${item.whole_digest ?? ''}:${item.reminded}`;
    const options = {
      autoClose: false as const,
      actions: this.actions(entry, item)
    };
    const shown = this.shown.get(key);
    if (!shown) {
      const id = Notification.emit(text, item.reminded ? 'error' : 'warning', options);
      this.shown.set(key, { id, kernel: entry.id, key: version, text });
      return;
    }
    if (shown.key !== version) {
      // a reminder, or a request that changed: a new notification, in front
      retire(shown.id, shown.text);
      shown.id = Notification.emit(text, item.reminded ? 'error' : 'warning', options);
      shown.key = version;
      shown.text = text;
    } else if (tick) {
      Notification.update({ id: shown.id, message: text, type: item.reminded ? 'error' : 'warning', ...options });
      shown.text = text;
    }
  }

  private upsertFleet(key: string, entry: IKernelEntry, rows: Waiting[], tick: boolean): void {
    const text = fleetMessage(rows, entry);
    const reminded = rows.some(row => row.reminded);
    const version = `fleet:${reminded}`;
    const type = reminded ? 'error' : 'warning';
    const fleet = rows[0].fleet;
    const options = {
      autoClose: false as const,
      actions: [
        {
          label: 'Show',
          caption: 'Each row waits in the Claude panel, shown whole',
          callback: (event: MouseEvent) => {
            event.preventDefault();
            // the fleet's oldest row waiting now (one answered since the last draw is gone)
            const now = this.channels.entries().find(e => e.id === entry.id)?.state?.waiting ?? [];
            this.show(entry.id, (now.find(item => item.fleet === fleet) ?? rows[0]).id);
          },
          displayType: 'link' as const
        }
      ]
    };
    const shown = this.shown.get(key);
    if (!shown) {
      const id = Notification.emit(text, type, options);
      this.shown.set(key, { id, kernel: entry.id, key: version, text, rows: rows.length });
    } else if (shown.key !== version && reminded) {
      // a reminder: a new notification, in front (the reminded row answered: updated in place)
      retire(shown.id, shown.text);
      shown.id = Notification.emit(text, type, options);
      Object.assign(shown, { key: version, text, rows: rows.length });
    } else if (tick || shown.rows !== rows.length || shown.key !== version) {
      Notification.update({ id: shown.id, message: text, type, ...options });
      Object.assign(shown, { key: version, text, rows: rows.length });
    }
  }

  private actions(entry: IKernelEntry, item: Waiting): Notification.IAction[] {
    const actions: Notification.IAction[] = [];
    const answer = (action: 'allow' | 'deny') => (event: MouseEvent) => {
      event.preventDefault(); // the notification goes when the kernel says the approval did
      void this.channels
        .answer(entry.id, { id: item.id, action, digest: action === 'allow' ? item.line_digest : null, reason: '' })
        .then(result => {
          if (!result.ok) {
            Notification.error(`kandev-nb: not answered: ${result.error}`, { autoClose: 8000 });
          }
        });
    };
    if (allowable(item)) {
      actions.push({ label: 'Allow', callback: answer('allow'), displayType: 'accent' });
    }
    actions.push({ label: item.question ? 'Skip' : 'Deny', callback: answer('deny'), displayType: 'warn' });
    actions.push({
      label: 'Show',
      caption: allowable(item) ? 'Show it in the Claude panel' : 'Only a summary is shown here: the Claude panel shows all of it',
      callback: event => {
        event.preventDefault();
        this.show(entry.id, item.id);
      },
      displayType: 'link'
    });
    return actions;
  }

  private readonly shown = new Map<string, IShown>();
  private readonly timer: number;
}
