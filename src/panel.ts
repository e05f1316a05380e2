/**
 * The Claude panel: a sidebar tab listing, for every kernel of the server with kandev_nb
 * loaded, the waiting approvals and questions (each shown whole, as its card shows it, with
 * Allow / Deny answering through the kernel's broker and the same payload binding; a fleet's
 * rows too), the running turns (Stop), the running fleets (rows by status, spend, the rows
 * waiting, Stop all) and each session's turns and cost today. A click on an entry's head opens
 * its notebook at the cell (a fleet's: the cell of its board). Drawn with plain DOM and
 * JupyterLab's CSS variables.
 */

import { Widget } from '@lumino/widgets';

import { IKernelEntry, KernelChannels } from './kernels';
import { RunningFleet, RunningTurn, SessionCost, Waiting } from './messages';
import { basename, clock, waited } from './notifications';

/** The panel's id in the shell (also its DOM id). */
export const PANEL_ID = 'kandev-nb-panel';

/** A fleet's rows by status, as its board counts them: "19 done · 4 running · 2 waiting of 50". */
export function fleetCounts(fleet: RunningFleet): string {
  const parts: [number, string][] = [
    [fleet.done, 'done'],
    [fleet.error, fleet.error === 1 ? 'error' : 'errors'],
    [fleet.stopped, 'stopped'],
    [fleet.skipped, 'skipped'],
    [fleet.running - fleet.waiting, 'running'],
    [fleet.waiting, 'waiting'],
    [fleet.pending, 'not started']
  ];
  const shown = parts.filter(([n]) => n > 0).map(([n, what]) => `${n} ${what}`);
  return `${shown.join(' · ') || '0 rows'} of ${fleet.total}`;
}

/** Opens `path` and selects the cell whose execution count is `cell` (null: just opens it). */
export type OpenAt = (path: string, cell: number | null) => void;

function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  className: string,
  text?: string
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  node.className = className;
  if (text !== undefined) {
    node.textContent = text;
  }
  return node;
}

/** The sidebar widget. */
export class ClaudePanel extends Widget {
  constructor(
    private readonly channels: KernelChannels,
    private readonly openAt: OpenAt
  ) {
    super();
    this.id = PANEL_ID;
    this.addClass('kandev-panel');
    this.title.caption = 'Claude: waiting approvals, running turns, fleets, sessions';
    channels.changed.connect(() => this.draw(), this);
    this.timer = window.setInterval(() => this.tick(), 1000);
    this.draw();
  }

  /** Scroll to and highlight the entry of approval `id` of kernel `kernelId`. */
  reveal(kernelId: string, id: string): void {
    const node = this.node.querySelector(`[data-kernel="${CSS.escape(kernelId)}"][data-request="${CSS.escape(id)}"]`);
    if (node instanceof HTMLElement) {
      node.scrollIntoView({ block: 'nearest' });
      node.classList.add('kandev-panel-focus');
      window.setTimeout(() => node.classList.remove('kandev-panel-focus'), 2000);
      const allow = node.querySelector('button.kandev-panel-allow');
      if (allow instanceof HTMLElement) {
        allow.focus();
      }
    }
  }

  /** The oldest waiting approval (not a question) and its kernel, or null. */
  oldest(): { entry: IKernelEntry; item: Waiting } | null {
    let found: { entry: IKernelEntry; item: Waiting } | null = null;
    for (const entry of this.channels.entries()) {
      for (const item of entry.state?.waiting ?? []) {
        if (!item.question && (!found || waited(item, entry) > waited(found.item, found.entry))) {
          found = { entry, item };
        }
      }
    }
    return found;
  }

  dispose(): void {
    window.clearInterval(this.timer);
    super.dispose();
  }

  // --- drawing -----------------------------------------------------------------------------

  private draw(): void {
    const entries = this.channels.entries();
    const body = el('div', 'kandev-panel-body');
    body.append(el('h2', 'kandev-panel-title', 'Claude'));
    for (const entry of entries.filter(e => e.error)) {
      body.append(el('div', 'kandev-panel-error', `${basename(entry.path) || entry.id}: ${entry.error}`));
    }
    const live = entries.filter(e => e.state);
    const waiting = live.flatMap(entry => (entry.state?.waiting ?? []).map(item => ({ entry, item })));
    waiting.sort((a, b) => waited(b.item, b.entry) - waited(a.item, a.entry));
    body.append(this.section(`Waiting (${waiting.length})`, 'kandev-panel-waiting'));
    if (!waiting.length) {
      body.append(el('div', 'kandev-panel-empty', live.length ? 'Nothing waits for you.' : 'No kernel has kandev_nb loaded (%load_ext kandev_nb).'));
    }
    for (const { entry, item } of waiting) {
      body.append(this.approval(entry, item));
    }
    const turns = live.flatMap(entry => (entry.state?.turns ?? []).map(turn => ({ entry, turn })));
    body.append(this.section(`Running turns (${turns.length})`, 'kandev-panel-turns'));
    if (turns.length > 1) {
      const all = el('button', 'kandev-panel-button kandev-panel-stop-all', 'Stop all');
      all.onclick = () => this.channels.stop(null);
      body.append(all);
    }
    for (const { entry, turn } of turns) {
      body.append(this.turn(entry, turn));
    }
    const fleets = live.flatMap(entry => (entry.state?.fleets ?? []).map(fleet => ({ entry, fleet })));
    if (fleets.length) {
      body.append(this.section(`Fleets (${fleets.length})`, 'kandev-panel-fleets'));
    }
    for (const { entry, fleet } of fleets) {
      body.append(this.fleet(entry, fleet));
    }
    const sessions = live.flatMap(entry => (entry.state?.sessions ?? []).map(session => ({ entry, session })));
    body.append(this.section(`Sessions (${sessions.length})`, 'kandev-panel-sessions'));
    for (const { entry, session } of sessions) {
      body.append(this.session(entry, session));
    }
    this.node.replaceChildren(body);
    this.title.label = waiting.length ? `Claude (${waiting.length})` : 'Claude';
  }

  private tick(): void {
    for (const node of this.node.querySelectorAll<HTMLElement>('[data-since]')) {
      const base = Number(node.dataset.base);
      const since = Number(node.dataset.since);
      node.textContent = clock(base + (Date.now() - since) / 1000);
    }
  }

  private section(title: string, className: string): HTMLElement {
    return el('h3', `kandev-panel-section ${className}`, title);
  }

  private where(entry: IKernelEntry, cell: number | null, ...more: string[]): HTMLElement {
    const path = entry.state?.notebook ?? entry.path;
    const head = el('a', 'kandev-panel-where');
    head.href = '#';
    head.textContent = [basename(path) || 'a kernel', cell !== null && cell !== undefined ? `In [${cell}]` : '', ...more]
      .filter(Boolean)
      .join(' · ');
    head.title = path ? `Open ${path} at this cell` : 'Its notebook is not known';
    head.onclick = event => {
      event.preventDefault();
      if (path) {
        this.openAt(path, cell);
      }
    };
    return head;
  }

  private counter(seconds: number, since: number): HTMLElement {
    const node = el('span', 'kandev-panel-clock', clock(seconds + (Date.now() - since) / 1000));
    node.dataset.base = String(seconds);
    node.dataset.since = String(since);
    return node;
  }

  private approval(entry: IKernelEntry, item: Waiting): HTMLElement {
    const card = el('div', 'kandev-panel-approval');
    card.dataset.kernel = entry.id;
    card.dataset.request = item.id;
    const head = el('div', 'kandev-panel-head');
    const fleet = item.fleet ? entry.state?.fleets.find(f => f.id === item.fleet) : undefined;
    const fleetName = item.fleet ? `fleet ${fleet?.name ?? ''}`.trim() : '';
    head.append(this.where(entry, item.cell, fleetName, item.row ?? '', item.question ? 'Claude asks' : item.tool));
    const time = el('span', 'kandev-panel-waited', ' · waiting ');
    time.append(this.counter(item.age_s, entry.received));
    head.append(time);
    card.append(head);
    if (item.warning) {
      card.append(el('div', 'kandev-panel-warning', item.warning));
    }
    card.append(el('pre', 'kandev-panel-whole', item.whole));
    const note = el('div', 'kandev-panel-note');
    const buttons = el('div', 'kandev-panel-buttons');
    if (item.question) {
      note.textContent = 'A question: answer it on its card (open the notebook), or skip it.';
    }
    const reason = el('input', 'kandev-panel-reason');
    reason.placeholder = item.question ? '' : 'reason (sent to Claude)';
    reason.type = 'text';
    const send = (action: 'allow' | 'deny') => {
      for (const b of buttons.querySelectorAll('button')) {
        (b as HTMLButtonElement).disabled = true;
      }
      note.textContent = '';
      void this.channels
        .answer(entry.id, {
          id: item.id,
          action,
          digest: action === 'allow' ? item.whole_digest : null,
          reason: action === 'deny' ? reason.value : ''
        })
        .then(result => {
          if (!result.ok) {
            note.textContent = `Not answered: ${result.error}`;
            for (const b of buttons.querySelectorAll('button')) {
              (b as HTMLButtonElement).disabled = false;
            }
          }
        });
    };
    if (!item.question) {
      const allow = el('button', 'kandev-panel-button kandev-panel-allow', 'Allow once');
      allow.title = 'Allow this call, exactly as shown above';
      allow.onclick = () => send('allow');
      buttons.append(allow);
    }
    const deny = el('button', 'kandev-panel-button kandev-panel-deny', item.question ? 'Skip' : 'Deny');
    deny.onclick = () => send('deny');
    reason.onkeydown = event => {
      if (event.key === 'Enter') {
        send('deny');
      }
    };
    buttons.append(deny);
    if (!item.question) {
      buttons.append(reason);
    }
    card.append(buttons, note);
    return card;
  }

  private turn(entry: IKernelEntry, turn: RunningTurn): HTMLElement {
    const row = el('div', 'kandev-panel-turn');
    row.dataset.kernel = entry.id;
    row.append(this.where(entry, turn.cell, turn.session));
    const stats = el('span', 'kandev-panel-stats', ' · ');
    stats.append(this.counter(turn.elapsed_s, entry.received));
    stats.append(` · ${turn.tools} tool call${turn.tools === 1 ? '' : 's'}`);
    if (turn.context_tokens) {
      stats.append(` · ${turn.context_tokens.toLocaleString()} tokens of context`);
    }
    row.append(stats);
    const stop = el('button', 'kandev-panel-button kandev-panel-stop', 'Stop');
    stop.title = 'Stop this turn (the protocol’s interrupt; the session stays)';
    stop.onclick = () => {
      stop.disabled = true;
      this.channels.stop(entry.id, turn.session);
    };
    row.append(stop);
    return row;
  }

  private fleet(entry: IKernelEntry, fleet: RunningFleet): HTMLElement {
    const row = el('div', 'kandev-panel-fleet');
    row.dataset.kernel = entry.id;
    row.dataset.fleet = fleet.id;
    row.append(this.where(entry, fleet.cell, `fleet ${fleet.name ?? ''}`.trim()));
    const budget = fleet.budget_usd !== null ? ` of $${fleet.budget_usd}` : '';
    const counts = el('div', 'kandev-panel-fleet-counts', fleetCounts(fleet));
    const stats = el('div', 'kandev-panel-stats', `$${fleet.spent_usd.toFixed(4)}${budget} · `);
    stats.append(this.counter(fleet.elapsed_s, entry.received), ' elapsed');
    row.append(counts, stats);
    const buttons = el('div', 'kandev-panel-buttons');
    if (fleet.waiting) {
      const show = el('a', 'kandev-panel-fleet-waiting', `${fleet.waiting} row${fleet.waiting === 1 ? '' : 's'} waiting for you`);
      show.href = '#';
      show.title = 'Show its oldest waiting row above';
      show.onclick = event => {
        event.preventDefault();
        const first = (entry.state?.waiting ?? [])
          .filter(w => w.fleet === fleet.id)
          .sort((a, b) => b.age_s - a.age_s)[0];
        if (first) {
          this.reveal(entry.id, first.id);
        }
      };
      buttons.append(show);
    }
    if (fleet.stopping) {
      buttons.append(el('span', 'kandev-panel-stats', `stopping: ${fleet.stopping}`));
    } else {
      const stop = el('button', 'kandev-panel-button kandev-panel-fleet-stop', 'Stop all');
      stop.title = 'Stop every row of this fleet, as its board’s Stop all (running rows are interrupted, the rest skipped)';
      stop.onclick = () => {
        stop.disabled = true;
        this.channels.stopFleet(entry.id, fleet.id);
      };
      buttons.append(stop);
    }
    row.append(buttons);
    return row;
  }

  private session(entry: IKernelEntry, session: SessionCost): HTMLElement {
    const row = el('div', 'kandev-panel-session');
    row.append(this.where(entry, null, session.session));
    const cost = `$${session.cost_today_usd.toFixed(4)}`;
    row.append(
      el(
        'span',
        'kandev-panel-stats',
        ` · ${session.turns_today} turn${session.turns_today === 1 ? '' : 's'} today, ${cost}${session.running ? ' · running' : ''}`
      )
    );
    return row;
  }

  private readonly timer: number;
}
