// The notebook bridge's first page code: all a page gets until it says it is there.
//
// The kernel makes the bridge's model with this module as its _esm. A page that holds the model
// (JupyterLab, Notebook 7, VS Code, Colab) says "present"; the kernel answers by setting the
// widget's _esm to the whole bridge (bridge.ts), which anywidget loads in place of this one and
// which says hello. A headless run (jupyter execute, nbclient, papermill) holds no page, so the
// widget state it saves keeps these few lines, not the bridge (issue 37).

import type { BridgePresent } from "./messages";

function initialize({ model }: any) {
  const present: BridgePresent = { kind: "present" };
  try {
    model.send(present);
  } catch (err) {
    console.warn("kandev-nb bridge could not send", err);
  }
}

export default { initialize };
