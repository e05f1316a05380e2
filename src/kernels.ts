/**
 * The extension's channel to every kernel of the server that has kandev_nb loaded.
 *
 * For each running kernel (`serviceManager.kernels`), a kernel connection of its own with
 * `handleComms: false` (so it never answers, or closes, the comms of the notebook's own
 * connection) and one comm opened by hand: a `comm_open` to target `kandev_nb.lab` on the
 * shell channel, the kernel's `comm_msg`s read from the iopub messages carrying its comm_id.
 * Jupyter authenticates the connection; nothing of ours listens anywhere.
 *
 * A kernel without kandev_nb loaded closes the comm (unknown target); the channel opens it
 * again after that kernel next ran something (busy, then idle), so `%load_ext kandev_nb` is
 * noticed. On a restart, an auto-restart or a kernel's death, that kernel's entries go at once
 * (`changed` fires) and `ended` fires with its id, for the cards and toasts in its pages.
 *
 * The messages are declared once, in kandev_nb/notebook/lab_messages.py; `./messages` is
 * generated from them.
 */

import { JupyterFrontEnd } from '@jupyterlab/application';
import { Kernel, KernelMessage } from '@jupyterlab/services';
import { UUID } from '@lumino/coreutils';
import { ISignal, Signal } from '@lumino/signaling';

import { Answer, Answered, Hello, LabSettings, Mismatch, State, Stop, StopFleet } from './messages';

/** The comm target the kernel registers (kandev_nb.notebook.lab_messages.TARGET). */
export const TARGET = 'kandev_nb.lab';

/** The protocol of the messages (kandev_nb.notebook.lab_messages.PROTOCOL). */
export const PROTOCOL = 2;

/** One kernel as the panel shows it. */
export interface IKernelEntry {
  /** The kernel's id. */
  id: string;
  /** The notebook (or console) path its session names, from the session manager. */
  path: string | null;
  /** The latest State it sent (null: kandev_nb not loaded there, or not yet heard from). */
  state: State | null;
  /** `Date.now()` when `state` arrived: the page counts the seconds from it. */
  received: number;
  /** Why this kernel does not talk to the page (a protocol mismatch), or ''. */
  error: string;
}

interface IChannel {
  entry: IKernelEntry;
  connection: Kernel.IKernelConnection;
  commId: string | null;
  open: boolean;
  busySince: boolean;
  retry: boolean;
  answers: Map<string, (answer: Answered) => void>;
}

/** Every kernel's channel; one instance per page. */
export class KernelChannels {
  constructor(
    private readonly app: JupyterFrontEnd,
    private settings: () => LabSettings,
    private readonly version: string
  ) {
    const kernels = app.serviceManager.kernels;
    kernels.runningChanged.connect(() => this.follow(), this);
    app.serviceManager.sessions.runningChanged.connect(() => this.paths(), this);
    void kernels.ready.then(() => this.follow());
    // a page that goes closes its comms, so the kernels stop sending to it
    window.addEventListener('pagehide', () => this.closeAll());
  }

  /** Close every comm this page opened (the page goes). */
  closeAll(): void {
    for (const channel of this.channels.values()) {
      if (channel.commId && !channel.connection.isDisposed) {
        const msg = KernelMessage.createMessage({
          msgType: 'comm_close',
          channel: 'shell',
          session: channel.connection.clientId,
          username: channel.connection.username,
          content: { comm_id: channel.commId, data: {} }
        });
        try {
          channel.connection.sendShellMessage(msg, false, true);
        } catch {
          // the connection is already closing: the kernel drops the comm with its client
        }
        channel.commId = null;
        channel.open = false;
      }
    }
  }

  /** Fires when any kernel's entry changed. */
  get changed(): ISignal<this, void> {
    return this._changed;
  }

  /** Fires with a kernel's id when it restarted, died or was shut down: its turns ended. */
  get ended(): ISignal<this, string> {
    return this._ended;
  }

  /** The kernels with kandev_nb loaded, or refusing this page (a mismatch). */
  entries(): IKernelEntry[] {
    return [...this.channels.values()].map(c => c.entry).filter(e => e.state !== null || e.error);
  }

  /** Is this kernel's channel open (the panel and notifications speak for it)? */
  handles(kernelId: string): boolean {
    const channel = this.channels.get(kernelId);
    return !!channel && channel.open && channel.entry.state !== null;
  }

  /**
   * Allow or deny approval `id` of kernel `kernelId`; `digest` is that of the text the page
   * showed. Resolves with the kernel's answer (`ok` false and `error` when it was refused).
   */
  answer(kernelId: string, message: Omit<Answer, 'kind'>): Promise<Answered> {
    const channel = this.channels.get(kernelId);
    if (!channel || !channel.open) {
      return Promise.resolve({ kind: 'answered', id: message.id, ok: false, error: 'this kernel is gone' });
    }
    return new Promise(resolve => {
      channel.answers.set(message.id, resolve);
      this.send(channel, { kind: 'answer', ...message } as Answer);
    });
  }

  /** Stop the running turn of `session` (null: every turn) in kernel `kernelId` (null: every kernel). */
  stop(kernelId: string | null, session: string | null = null): void {
    for (const channel of this.channels.values()) {
      if (channel.open && (kernelId === null || channel.entry.id === kernelId)) {
        this.send(channel, { kind: 'stop', session } as Stop);
      }
    }
  }

  /** Stop every row of fleet `fleetId` (a RunningFleet's id) in kernel `kernelId`, as its board's Stop all. */
  stopFleet(kernelId: string, fleetId: string): void {
    const channel = this.channels.get(kernelId);
    if (channel && channel.open) {
      this.send(channel, { kind: 'stop_fleet', id: fleetId });
    }
  }

  /**
   * Kernel `kernelId` restarted or stopped (its notebook's own connection said so): forget
   * what it showed now, as when this channel's connection sees it.
   */
  kernelEnded(kernelId: string): void {
    const channel = this.channels.get(kernelId);
    if (channel) {
      this.drop(channel, true);
    }
  }

  /** Send the settings (changed in the settings registry) to every kernel. */
  sendSettings(): void {
    for (const channel of this.channels.values()) {
      if (channel.open) {
        this.send(channel, { kind: 'settings', settings: this.settings() });
      }
    }
  }

  dispose(): void {
    for (const channel of this.channels.values()) {
      channel.connection.dispose();
    }
    this.channels.clear();
    Signal.clearData(this);
  }

  // --- following the kernels ----------------------------------------------------------------

  private follow(): void {
    const running = new Map<string, Kernel.IModel>();
    for (const model of this.app.serviceManager.kernels.running()) {
      running.set(model.id, model);
    }
    for (const [id, channel] of this.channels) {
      if (!running.has(id)) {
        this.drop(channel, true);
        this.channels.delete(id);
        channel.connection.dispose();
      }
    }
    for (const [id, model] of running) {
      if (!this.channels.has(id)) {
        this.connect(model);
      }
    }
    this.paths();
  }

  private paths(): void {
    const byKernel = new Map<string, string>();
    for (const session of this.app.serviceManager.sessions.running()) {
      if (session.kernel) {
        byKernel.set(session.kernel.id, session.path);
      }
    }
    let changed = false;
    for (const channel of this.channels.values()) {
      const path = byKernel.get(channel.entry.id) ?? channel.entry.path;
      if (path !== channel.entry.path) {
        channel.entry.path = path;
        changed = true;
      }
    }
    if (changed) {
      this._changed.emit();
    }
  }

  private connect(model: Kernel.IModel): void {
    const connection = this.app.serviceManager.kernels.connectTo({ model, handleComms: false });
    const channel: IChannel = {
      entry: { id: model.id, path: null, state: null, received: 0, error: '' },
      connection,
      commId: null,
      open: false,
      busySince: false,
      retry: false,
      answers: new Map()
    };
    this.channels.set(model.id, channel);
    connection.iopubMessage.connect((_k, msg) => this.onIopub(channel, msg));
    connection.statusChanged.connect((_k, status) => this.onStatus(channel, status));
    connection.disposed.connect(() => this.drop(channel, true));
    this.open(channel);
  }

  private open(channel: IChannel): void {
    if (channel.connection.isDisposed || channel.connection.status === 'dead') {
      return;
    }
    channel.commId = UUID.uuid4();
    channel.open = false;
    const hello: Hello = { kind: 'hello', protocol: PROTOCOL, version: this.version, settings: this.settings() };
    const msg = KernelMessage.createMessage({
      msgType: 'comm_open',
      channel: 'shell',
      session: channel.connection.clientId,
      username: channel.connection.username,
      content: { comm_id: channel.commId, target_name: TARGET, data: hello as any }
    });
    try {
      channel.connection.sendShellMessage(msg, false, true);
    } catch (reason) {
      console.warn('kandev-nb: could not open the channel to kernel', channel.entry.id, reason);
    }
  }

  private send(channel: IChannel, data: Answer | Stop | StopFleet | { kind: 'settings'; settings: LabSettings }): void {
    if (!channel.commId || channel.connection.isDisposed) {
      return;
    }
    const msg = KernelMessage.createMessage({
      msgType: 'comm_msg',
      channel: 'shell',
      session: channel.connection.clientId,
      username: channel.connection.username,
      content: { comm_id: channel.commId, data: data as any }
    });
    try {
      channel.connection.sendShellMessage(msg, false, true);
    } catch (reason) {
      console.warn('kandev-nb: could not send to kernel', channel.entry.id, reason);
    }
  }

  private onIopub(channel: IChannel, msg: KernelMessage.IIOPubMessage): void {
    const type = msg.header.msg_type;
    const content = msg.content as any;
    if (type === 'execute_input' && typeof content.code === 'string' && content.code.includes('kandev_nb')) {
      channel.retry = true; // `%load_ext kandev_nb` (or an import) may register the target: try again when idle
      return;
    }
    if ((type === 'comm_msg' || type === 'comm_close') && content.comm_id === channel.commId) {
      if (type === 'comm_close') {
        this.drop(channel, false);
        return;
      }
      this.onMessage(channel, content.data);
    }
  }

  private onMessage(channel: IChannel, data: any): void {
    if (!data || typeof data !== 'object') {
      return;
    }
    if (data.kind === 'state') {
      channel.open = true;
      channel.entry.state = data as State;
      channel.entry.received = Date.now();
      channel.entry.error = '';
      this._changed.emit();
    } else if (data.kind === 'answered') {
      const answered = data as Answered;
      const resolve = channel.answers.get(answered.id);
      channel.answers.delete(answered.id);
      if (resolve) {
        resolve(answered);
      }
    } else if (data.kind === 'mismatch') {
      channel.entry.error = (data as Mismatch).error;
      channel.entry.state = null;
      this._changed.emit();
    }
  }

  private onStatus(channel: IChannel, status: Kernel.Status): void {
    // 'starting' after the kernel talked to us: a new process (a restart asked from elsewhere)
    const gone = status === 'restarting' || status === 'autorestarting' || status === 'dead';
    if (gone || (status === 'starting' && (channel.open || channel.entry.state !== null))) {
      this.drop(channel, true);
      return;
    }
    if (status === 'busy') {
      channel.busySince = true;
    } else if (status === 'idle' && channel.busySince) {
      channel.busySince = false;
      if (channel.retry && !channel.open && !channel.entry.error) {
        channel.retry = false;
        this.open(channel); // what just ran named kandev_nb: it may have registered the target
      }
    }
  }

  /** Forget what `channel` showed; `ended`: its turns ended with the kernel (restart, death). */
  private drop(channel: IChannel, ended: boolean): void {
    const had = channel.entry.state !== null;
    channel.open = false;
    channel.entry.state = null;
    channel.commId = ended ? null : channel.commId;
    for (const [id, resolve] of channel.answers) {
      resolve({ kind: 'answered', id, ok: false, error: 'the kernel restarted or stopped: nothing was allowed' });
    }
    channel.answers.clear();
    if (ended) {
      this._ended.emit(channel.entry.id);
    }
    if (had) {
      this._changed.emit();
    }
  }

  private readonly channels = new Map<string, IChannel>();
  private readonly _changed = new Signal<this, void>(this);
  private readonly _ended = new Signal<this, string>(this);
}
