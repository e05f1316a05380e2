// The notebook bridge: the kernel's requests acted on in the tab's own notebook.
//
// anywidget calls initialize({model}) once per frontend widget manager that creates the
// model. The tab's notebook document comes from kandev-nb's JupyterLab extension where it runs
// (INotebookTracker: the panel whose kernel is this widget manager's; documented API). Where no
// extension runs, the fallback: in JupyterLab 4 / Notebook 7 the widget manager has a `context`
// (the document context) whose `model.sharedModel` is the tab's YNotebook. Not documented API:
// the Python side pins the anywidget / jupyterlab_widgets ranges this was tested with, and the
// browser tests guard it (in a Lab with the extension disabled).
//
// Messages (widget comm, "msg:custom"; the Bridge* models of kandev_nb/notebook/widget_messages.py):
//   kernel -> tab: {kind: "request", id, view, op, args}   (view null: any view answers)
//   tab -> kernel: {kind: "hello", view, path, ok, reason?, via: "extension" | "widget manager"}
//                  {kind: "answer", id, view, ok, result | error, stale?}

import { kandevAnswerActions } from "./answer_actions";
import { kandevCellLanguage } from "./cell_language";
import type { BridgeAnswer, BridgeGoodbye, BridgeHello, BridgeRequest, ChipNext } from "./messages";

/** What a tab sends the bridge (kandev_nb/notebook/widget_messages.py FromTab). */
export type ToKernel = BridgeHello | BridgeAnswer | BridgeGoodbye | ChipNext;

function newViewId() {
  return "view-" + Math.random().toString(36).slice(2, 10) + "-" + Date.now().toString(36);
}

function cellIndex(nb: any, id: any) {
  const cells = nb.cells;
  for (let i = 0; i < cells.length; i++) {
    if (cells[i].id === id) return i;
  }
  return -1;
}

function findCell(nb: any, args: any) {
  if (args.id) {
    const i = cellIndex(nb, args.id);
    if (i < 0) throw new Error("no cell with id " + args.id + " in the notebook (it was deleted?)");
    return [i, nb.cells[i]];
  }
  throw new Error("the request names no cell id");
}

function cellJSON(cell: any, index: any) {
  const json = cell.toJSON();
  json.index = index;
  json.id = cell.id;
  return json;
}

const OPS: Record<string, (nb: any, args: any, context: any) => any> = {
  ping(nb: any) {
    return { cells: nb.cells.length };
  },
  read(nb: any) {
    return { cells: nb.cells.map((c: any, i: any) => cellJSON(c, i)) };
  },
  cells(nb: any) {
    // What a call needs to find its cell: no outputs (they can be megabytes of images).
    return {
      cells: nb.cells.map((c: any, i: any) => ({
        index: i, id: c.id, cell_type: c.cell_type, source: c.getSource(),
        has_outputs: typeof c.getOutputs === "function" ? c.getOutputs().length > 0 : false,
      })),
    };
  },
  insert(nb: any, args: any) {
    let index = args.index;
    if (Array.isArray(args.after_ids)) {
      index = nb.cells.length;
      for (const id of args.after_ids) {
        const after = cellIndex(nb, id);
        if (after >= 0) {
          index = after + 1;
          break;
        }
      }
    }
    if (index === undefined || index === null || index > nb.cells.length) index = nb.cells.length;
    if (index < 0) index = 0;
    const cell: any = { cell_type: args.cell_type, source: args.source, metadata: {} };
    if (args.cell_type === "code") {
      cell.outputs = [];
      cell.execution_count = null;
    }
    const made = nb.insertCell(index, cell);
    return { id: made.id, index };
  },
  edit(nb: any, args: any) {
    const [index, cell] = findCell(nb, args);
    const current = cell.getSource();
    if (args.expected_source !== undefined && args.expected_source !== null && current !== args.expected_source) {
      return { stale: true, index, source: current };
    }
    nb.transact(() => {
      cell.setSource(args.source);
      if (cell.cell_type === "code") {
        cell.setOutputs([]);
        cell.execution_count = null;
      }
    });
    return { index, id: cell.id, old_source: current };
  },
  delete(nb: any, args: any) {
    const [index, cell] = findCell(nb, args);
    const source = cell.getSource();
    const cellType = cell.cell_type;
    if (args.expected_source !== undefined && args.expected_source !== null && source !== args.expected_source) {
      return { stale: true, index, source };
    }
    nb.deleteCell(index);
    return { index, id: args.id, source, cell_type: cellType };
  },
  attach(nb: any, args: any, context: any) {
    // A reloaded or newly opened tab: the running cell gets the turn's outputs (the live view's
    // widget, later its static rendering). Found by id, else by its source (ids of a notebook
    // saved without ids change on every load).
    let index = cellIndex(nb, args.id);
    if (index < 0 && typeof args.source === "string") {
      index = nb.cells.findIndex((c: any) => c.cell_type === "code" && c.getSource() === args.source);
    }
    if (index < 0) throw new Error("the running cell is not in this tab");
    const cell = nb.cells[index];
    // JupyterLab trusts what the kernel sent while the cell ran; these outputs are that.
    const cellModel = context.model.cells && context.model.cells.get ? context.model.cells.get(index) : null;
    if (cellModel && "trusted" in cellModel) cellModel.trusted = true;
    nb.transact(() => {
      cell.setOutputs(args.outputs || []);
      if (args.execution_count !== undefined) cell.execution_count = args.execution_count;
    });
    if (cellModel && "trusted" in cellModel) cellModel.trusted = true;
    return { index, id: cell.id };
  },
  set_outputs(nb: any, args: any) {
    const [index, cell] = findCell(nb, args);
    if (cell.cell_type !== "code") throw new Error("cell " + args.id + " is not a code cell");
    nb.transact(() => {
      cell.setOutputs(args.outputs || []);
      cell.execution_count = args.execution_count === undefined ? null : args.execution_count;
    });
    return { index, id: cell.id };
  },
};

// The tab's notebook document ({path, model}): through kandev-nb's JupyterLab extension when it
// runs ((window as any).__kandevNbLab.documentFor: INotebookTracker's panel of this kernel, documented API),
// else the widget manager's `context` (not documented API: the fallback where no extension runs).
function documentOf(manager: any) {
  const lab = (window as any).__kandevNbLab;
  const kernel = manager && manager.kernel;
  if (lab && typeof lab.documentFor === "function" && kernel && kernel.id) {
    try {
      const doc = lab.documentFor(kernel.id);
      if (doc && doc.model) return { context: doc, via: "extension" as const };
    } catch (err) {
      console.warn("kandev-nb bridge: the extension gave no document", err);
    }
  }
  const context = manager && manager.context;
  return { context, via: "widget manager" as const };
}

function initialize({ model }: any) {
  const view = newViewId();
  const manager = model.widget_manager;
  const { context, via } = documentOf(manager);
  const shared = context && context.model && context.model.sharedModel;
  const say = (content: ToKernel) => {
    try {
      model.send(content);
    } catch (err) {
      console.warn("kandev-nb bridge could not send", err);
    }
  };
  const hello = () => {
    if (shared && typeof shared.insertCell === "function") {
      // The kernel connection's client id is the `session` of the execute requests this tab
      // sends: the kernel acts in the tab whose cell runs the turn.
      const client = manager.kernel ? manager.kernel.clientId : null;
      say({ kind: "hello", view, ok: true, path: context.path || null, client, via });
    } else {
      say({ kind: "hello", view, ok: false, reason: "this frontend gives widgets no notebook document" });
    }
  };
  const onMessage = (msg: BridgeRequest) => {
    if (!msg || msg.kind !== "request") return;
    if (msg.kind === "request" && msg.op === "hello") {
      hello();
      return;
    }
    if (msg.view && msg.view !== view) return; // meant for another tab
    if (!shared) {
      say({ kind: "answer", id: msg.id, view, ok: false, error: "no notebook document in this view" });
      return;
    }
    const op = OPS[msg.op];
    if (!op) {
      say({ kind: "answer", id: msg.id, view, ok: false, error: "unknown request " + msg.op });
      return;
    }
    try {
      const result = op(shared, msg.args || {}, context);
      say({ kind: "answer", id: msg.id, view, ok: true, result });
    } catch (err: any) {
      say({ kind: "answer", id: msg.id, view, ok: false, error: String((err && err.message) || err) });
    }
  };
  model.on("msg:custom", onMessage);
  // Insert / Copy on answers, chips in headers (answer_actions.ts).
  const kernel = model.get("kernel");
  const undecorate = shared && kernel ? kandevAnswerActions(shared, OPS, say, kernel) : null;
  // %%claude bodies highlighted as Markdown (cell_language.ts).
  const unhighlight = context && context.model ? kandevCellLanguage(context.model) : null;
  // A reload or a closed tab: say goodbye, so the kernel stops addressing this view at once.
  const goodbye = () => say({ kind: "goodbye", view });
  window.addEventListener("pagehide", goodbye);
  hello();
  return () => {
    model.off("msg:custom", onMessage);
    window.removeEventListener("pagehide", goodbye);
    if (undecorate) undecorate();
    if (unhighlight) unhighlight();
  };
}

export default { initialize };
