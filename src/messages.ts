/* Generated from kandev_nb/notebook/lab_messages.py by 'jlpm build:messages': do not edit. */

/**
 * Messages between a kernel and kandev-nb's JupyterLab extension (kandev_nb/notebook/lab_messages.py).
 */
export interface KandevNbLabMessages {
  Answer?: Answer;
  Answered?: Answered;
  Hello?: Hello;
  Mismatch?: Mismatch;
  Settings?: Settings;
  State?: State;
  Stop?: Stop;
  StopFleet?: StopFleet;
}
/**
 * Allow or deny one waiting approval. `digest` is the
 * :attr:`~kandev_nb.agent.surface.SurfaceText.digest` of the text the page showed (the
 * panel: the whole payload; a notification: its one line); the broker allows only when that
 * text was the whole payload.
 *
 * This interface was referenced by `KandevNbLabMessages`'s JSON-Schema
 * via the `definition` "Answer".
 */
export interface Answer {
  action: "allow" | "deny";
  digest?: string | null;
  id: string;
  kind?: "answer";
  reason?: string;
}
/**
 * The result of an :class:`Answer` (`error` says why it was refused).
 *
 * This interface was referenced by `KandevNbLabMessages`'s JSON-Schema
 * via the `definition` "Answered".
 */
export interface Answered {
  error?: string;
  id: string;
  kind?: "answered";
  ok: boolean;
}
/**
 * The ``comm_open`` data: the extension's version and protocol, and the settings.
 *
 * This interface was referenced by `KandevNbLabMessages`'s JSON-Schema
 * via the `definition` "Hello".
 */
export interface Hello {
  kind?: "hello";
  protocol: number;
  settings?: LabSettings;
  version: string;
}
/**
 * The user's settings from Lab's settings registry (schema/plugin.json), as composed.
 */
export interface LabSettings {
  defaultMode?: "supervised" | "plan" | "acceptEdits" | "autonomous";
  denyAfterSeconds?: number;
  notifications?: boolean;
  unansweredCard?: "wait" | "deny-after";
}
/**
 * The page speaks another protocol: nothing it sends is acted on.
 *
 * This interface was referenced by `KandevNbLabMessages`'s JSON-Schema
 * via the `definition` "Mismatch".
 */
export interface Mismatch {
  error: string;
  kind?: "mismatch";
  protocol?: number;
  version: string;
}
/**
 * New settings from the settings registry (the person changed them in Lab).
 *
 * This interface was referenced by `KandevNbLabMessages`'s JSON-Schema
 * via the `definition` "Settings".
 */
export interface Settings {
  kind?: "settings";
  settings: LabSettings1;
}
/**
 * The user's settings from Lab's settings registry (schema/plugin.json), as composed.
 *
 * This interface was referenced by `KandevNbLabMessages`'s JSON-Schema
 * via the `definition` "LabSettings".
 */
export interface LabSettings1 {
  defaultMode?: "supervised" | "plan" | "acceptEdits" | "autonomous";
  denyAfterSeconds?: number;
  notifications?: boolean;
  unansweredCard?: "wait" | "deny-after";
}
/**
 * What the panel shows of one kernel, sent when it changed (not for the seconds: the page
 * counts them on from the State's arrival).
 *
 * This interface was referenced by `KandevNbLabMessages`'s JSON-Schema
 * via the `definition` "State".
 */
export interface State {
  fleets: RunningFleet[];
  kind?: "state";
  notebook: string | null;
  protocol?: number;
  sessions: SessionCost[];
  turns: RunningTurn[];
  version: string;
  waiting: Waiting[];
}
/**
 * A fleet running in the kernel (``kandev_nb.fleet(...)``, ``%%claude --over``): its rows
 * by status, what it spent, Stop all (:class:`StopFleet` with its `id`).
 *
 * `id` names it while it runs (two fleets may share a `name`, or have none); `name` is its
 * ledger name (None: unnamed); `cell` the execution count of the cell that shows its board
 * (``In [n]``; its notebook is :attr:`State.notebook`). The counts add up to `total`
 * (done + error + stopped + skipped + running + pending); `waiting` of the running rows wait
 * for a person (their approvals are in :attr:`State.waiting`, named by row). `spent_usd`:
 * the finished rows' cost this run (USD), of `budget_usd` (None: no budget); `elapsed_s`
 * since it started (the page counts on from the State's arrival). `stopping`: why it was stopped (Stop
 * all, the budget, the kernel's interrupt) while its rows end, else None.
 *
 * This interface was referenced by `KandevNbLabMessages`'s JSON-Schema
 * via the `definition` "RunningFleet".
 */
export interface RunningFleet {
  budget_usd: number | null;
  cell: number | null;
  done: number;
  elapsed_s: number;
  error: number;
  id: string;
  name: string | null;
  pending: number;
  running: number;
  skipped: number;
  spent_usd: number;
  stopped: number;
  stopping: string | null;
  total: number;
  waiting: number;
}
/**
 * One `%%claude` session of the kernel: its turns and their cost (USD) since midnight UTC,
 * from each turn's `result.total_cost_usd` difference.
 *
 * This interface was referenced by `KandevNbLabMessages`'s JSON-Schema
 * via the `definition` "SessionCost".
 */
export interface SessionCost {
  cost_today_usd: number;
  running: boolean;
  session: string;
  session_id: string | null;
  turns_today: number;
}
/**
 * A turn that runs now: its session, cell (``In [n]``), seconds since it started, the
 * context it uses (tokens, from the latest assistant message's `message.usage`) and its tool
 * calls so far. Its cost is known only from the turn's `result` (`total_cost_usd`).
 *
 * This interface was referenced by `KandevNbLabMessages`'s JSON-Schema
 * via the `definition` "RunningTurn".
 */
export interface RunningTurn {
  cell: number | null;
  context_tokens: number;
  elapsed_s: number;
  session: string;
  tools: number;
}
/**
 * One waiting approval or question, as the panel and the notifications show it.
 *
 * `whole` is the whole payload as the card shows it (every input field verbatim, hidden
 * characters as ``⟨U+…⟩``), `whole_digest` the digest an Allow from the panel sends;
 * `line` the one line a notification shows, `complete` whether that line is the whole
 * payload (then a notification may offer Allow, sending `line_digest`). `reminded`: it
 * has waited past the reminder time of "wait and remind" (half the approval timeout).
 * `row`: the fleet row that asks ("row 6 of 50") and `fleet` its fleet's
 * :attr:`RunningFleet.id`, both None outside a fleet.
 *
 * This interface was referenced by `KandevNbLabMessages`'s JSON-Schema
 * via the `definition` "Waiting".
 */
export interface Waiting {
  age_s: number;
  cell: number | null;
  complete: boolean;
  fleet?: string | null;
  full_tool: string;
  id: string;
  left_s: number | null;
  line: string;
  line_digest: string | null;
  question: boolean;
  reminded?: boolean;
  row?: string | null;
  session: string;
  tool: string;
  warning: string;
  whole: string;
  whole_digest: string | null;
}
/**
 * Stop a running turn (`session` named) or every running turn of the kernel (None),
 * each running fleet's rows included (as its board's Stop all).
 *
 * This interface was referenced by `KandevNbLabMessages`'s JSON-Schema
 * via the `definition` "Stop".
 */
export interface Stop {
  kind?: "stop";
  session?: string | null;
}
/**
 * Stop every row of the running fleet `id` (:attr:`RunningFleet.id`), as its board's
 * Stop all: running rows get the protocol's interrupt and end "stopped", rows not started
 * end "skipped".
 *
 * This interface was referenced by `KandevNbLabMessages`'s JSON-Schema
 * via the `definition` "StopFleet".
 */
export interface StopFleet {
  id: string;
  kind?: "stop_fleet";
}
