/* Generated from kandev_nb/notebook/widget_messages.py by 'jlpm build:messages': do not edit. */

/**
 * Messages between kandev_nb's anywidgets and their page code (kandev_nb/notebook/widget_messages.py).
 */
export interface KandevNbWidgetMessages {
  ApprovalPress?: ApprovalPress;
  BridgeAnswer?: BridgeAnswer;
  BridgeGoodbye?: BridgeGoodbye;
  BridgeHello?: BridgeHello;
  BridgePresent?: BridgePresent;
  BridgeRequest?: BridgeRequest;
  ChipNext?: ChipNext;
  QuestionPress?: QuestionPress;
  RevokePress?: RevokePress;
  StreamAppend?: StreamAppend;
  StreamReset?: StreamReset;
  StreamSync?: StreamSync;
  ToastAnswer?: ToastAnswer;
  ToastAnswered?: ToastAnswered;
  TurnPress?: TurnPress;
}
/**
 * Page -> kernel: one answer on an approval card (see
 * :mod:`kandev_nb.notebook.widgets.approval`): `reason` of a deny, `input` (JSON object text)
 * of ``allow_edited`` and ``preview``, `index` of ``allow_suggestion``, `rule` of a fleet's
 * ``allow_all`` / ``deny_all`` / ``rule_preview``.
 *
 * This interface was referenced by `KandevNbWidgetMessages`'s JSON-Schema
 * via the `definition` "ApprovalPress".
 */
export interface ApprovalPress {
  action:
    | "allow"
    | "allow_always"
    | "allow_tool"
    | "deny"
    | "edit"
    | "allow_edited"
    | "allow_suggestion"
    | "preview"
    | "approve_accept_edits"
    | "approve_keep_asking"
    | "allow_all"
    | "deny_all"
    | "rule_preview";
  index?: number | null;
  input?: string | null;
  reason?: string | null;
  rule?: string | null;
}
/**
 * Tab -> kernel: the answer to the :class:`BridgeRequest` `id`: its `result`, or `error`.
 *
 * This interface was referenced by `KandevNbWidgetMessages`'s JSON-Schema
 * via the `definition` "BridgeAnswer".
 */
export interface BridgeAnswer {
  error?: string | null;
  id: number;
  kind?: "answer";
  ok: boolean;
  result?: {
    [k: string]: unknown;
  } | null;
  view: string;
}
/**
 * Tab -> kernel: the view is going (a reload, a closed tab): stop addressing it.
 *
 * This interface was referenced by `KandevNbWidgetMessages`'s JSON-Schema
 * via the `definition` "BridgeGoodbye".
 */
export interface BridgeGoodbye {
  kind?: "goodbye";
  view: string;
}
/**
 * Tab -> kernel: a view of the notebook (one per open tab of it) is there. `ok` False: this
 * frontend gives widgets no notebook document (`reason`). `path`: the notebook's path from the
 * server's root; `client`: the kernel connection's client id (the `session` of the tab's
 * execute requests); `via`: how the view reached the notebook.
 *
 * This interface was referenced by `KandevNbWidgetMessages`'s JSON-Schema
 * via the `definition` "BridgeHello".
 */
export interface BridgeHello {
  client?: string | null;
  kind?: "hello";
  ok: boolean;
  path?: string | null;
  reason?: string | null;
  via?: ("extension" | "widget manager") | null;
  view: string;
}
/**
 * Tab -> kernel: a page holds the bridge's model (the one message of its first page code,
 * ``bridge_stub.ts``); the kernel answers by sending the whole bridge as the widget's `_esm`.
 *
 * This interface was referenced by `KandevNbWidgetMessages`'s JSON-Schema
 * via the `definition` "BridgePresent".
 */
export interface BridgePresent {
  kind?: "present";
}
/**
 * Kernel -> tab: act on the tab's notebook. `view` None: every view answers (``op``
 * ``"hello"``: say hello again); `op` one of ``hello``, ``ping``, ``read``, ``cells``,
 * ``insert``, ``edit``, ``delete``, ``attach``, ``set_outputs`` (another is answered with an
 * error); `args` the op's arguments.
 *
 * This interface was referenced by `KandevNbWidgetMessages`'s JSON-Schema
 * via the `definition` "BridgeRequest".
 */
export interface BridgeRequest {
  args: {
    [k: string]: unknown;
  };
  id: number;
  kind: "request";
  op: string;
  view: string | null;
}
/**
 * Tab -> kernel: a header chip chose the `mode` or the `model` of `session`'s next turn
 * (:mod:`kandev_nb.notebook.answers`, which checks them).
 *
 * This interface was referenced by `KandevNbWidgetMessages`'s JSON-Schema
 * via the `definition` "ChipNext".
 */
export interface ChipNext {
  kind?: "next";
  mode?: string | null;
  model?: string | null;
  session: string;
}
/**
 * Page -> kernel: a question card's answers (by question: a label, labels or typed text; the
 * kernel also takes them as a list in question order), or ``skip``.
 *
 * This interface was referenced by `KandevNbWidgetMessages`'s JSON-Schema
 * via the `definition` "QuestionPress".
 */
export interface QuestionPress {
  action: "answer" | "skip";
  answers?:
    | {
        [k: string]: string | string[];
      }
    | (string | string[])[]
    | null;
}
/**
 * Page -> kernel: revoke the session grant `rule` (the permissions panel).
 *
 * This interface was referenced by `KandevNbWidgetMessages`'s JSON-Schema
 * via the `definition` "RevokePress".
 */
export interface RevokePress {
  action: "revoke";
  rule: string;
}
/**
 * Kernel -> view: `text` continues the text at offset `at`.
 *
 * This interface was referenced by `KandevNbWidgetMessages`'s JSON-Schema
 * via the `definition` "StreamAppend".
 */
export interface StreamAppend {
  at: number;
  text: string;
  type: "append";
}
/**
 * Kernel -> view: the whole text sent so far (the answer to a :class:`StreamSync` that
 * named another length).
 *
 * This interface was referenced by `KandevNbWidgetMessages`'s JSON-Schema
 * via the `definition` "StreamReset".
 */
export interface StreamReset {
  text: string;
  type: "reset";
}
/**
 * View -> kernel: the view has `have` characters (it mounted, or saw a gap).
 *
 * This interface was referenced by `KandevNbWidgetMessages`'s JSON-Schema
 * via the `definition` "StreamSync".
 */
export interface StreamSync {
  have: number;
  type?: "sync";
}
/**
 * Page -> kernel: a toast's Allow or Deny of the waiting approval `id`; `digest` is that of
 * the line the toast showed (an Allow is refused unless it was the whole payload).
 *
 * This interface was referenced by `KandevNbWidgetMessages`'s JSON-Schema
 * via the `definition` "ToastAnswer".
 */
export interface ToastAnswer {
  action: "allow" | "deny";
  digest?: string | null;
  id: string;
  kind: "answer";
  reason?: string;
}
/**
 * Kernel -> page: the result of a :class:`ToastAnswer` (`error` says why it was refused).
 *
 * This interface was referenced by `KandevNbWidgetMessages`'s JSON-Schema
 * via the `definition` "ToastAnswered".
 */
export interface ToastAnswered {
  error: string;
  id: string;
  kind: "answered";
  ok: boolean;
}
/**
 * Page -> kernel: a turn's footer button; `id` names the deleted cell of ``restore``.
 *
 * This interface was referenced by `KandevNbWidgetMessages`'s JSON-Schema
 * via the `definition` "TurnPress".
 */
export interface TurnPress {
  action: "retry" | "permissions" | "send_again" | "undo" | "restore";
  id?: string | null;
}
