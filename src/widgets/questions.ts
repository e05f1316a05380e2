// The controls of a question card (QuestionControls in ../questions.py): AskUserQuestion.
//
// Model "questions": JSON text [{question, header, multiSelect, options: [{label, description, preview}]}].
// Every answer is ONE custom message carrying what the person chose and typed, sent with the click
// (a synced Text value reaches the kernel stale while a cell blocks, DESIGN.md):
//   {action: "answer", answers: {<question>: <label> | [<label>...] | <typed text>}}
//   {action: "skip"}
// A single-choice question with one question on the card answers on the option's click; otherwise
// options toggle and "Submit" sends all answers. An "Other" text box per question: its text, when
// not empty, is that question's answer.

import type { QuestionPress } from "./messages";

function el(tag: any, cls: any, text?: any) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function button(label: any, cls: any, title: any) {
  const b = el("button", `jupyter-widgets jupyter-button widget-button ${cls}`);
  b.textContent = label;
  if (title) b.title = title;
  return b;
}

export default {
  render({ model, el: root }: any) {
    root.classList.add("kandev-question-controls");
    let questions = [];
    try {
      questions = JSON.parse(model.get("questions") || "[]");
    } catch (e) {
      questions = [];
    }
    const chosen = questions.map(() => new Set());
    const others: any = [];
    const controls: any = [];
    const single = questions.length === 1 && !questions[0].multiSelect;
    const send = (content: QuestionPress) => {
      if (!model.get("pending")) return;
      model.send(content);
    };
    const collect = () => {
      const answers: any = {};
      questions.forEach((q: any, i: any) => {
        const typed = others[i].value.trim();
        const labels = q.options.map((o: any) => o.label).filter((l: any) => chosen[i].has(l));
        answers[q.question] = typed || (q.multiSelect ? labels : labels[0] || "");
      });
      return answers;
    };
    questions.forEach((q: any, i: any) => {
      const box = el("div", "kandev-question");
      const head = el("div", "kandev-question-head");
      if (q.header) head.append(el("span", "kandev-question-chip", q.header));
      head.append(el("span", "kandev-question-text", q.question));
      if (q.multiSelect) head.append(el("span", "kandev-question-hint", " (choose any)"));
      box.append(head);
      const row = el("div", "kandev-question-options");
      const preview = el("div", "kandev-question-preview");
      preview.style.display = "none";
      const buttons: any = [];
      q.options.forEach((o: any) => {
        const b = button("", "kandev-question-option", o.description || o.label);
        b.dataset.label = o.label;
        b.append(el("div", "kandev-option-label", o.label));
        if (o.description) b.append(el("div", "kandev-option-description", o.description));
        const show = () => {
          preview.textContent = o.preview || "";
          preview.style.display = o.preview ? "" : "none";
        };
        b.addEventListener("focus", show);
        b.addEventListener("mouseenter", show);
        b.addEventListener("click", () => {
          if (single) return send({ action: "answer", answers: { [q.question]: o.label } });
          if (!q.multiSelect) {
            chosen[i].clear();
            buttons.forEach((x: any) => x.classList.remove("kandev-chosen", "mod-active"));
          }
          if (chosen[i].has(o.label)) {
            chosen[i].delete(o.label);
            b.classList.remove("kandev-chosen", "mod-active");
          } else {
            chosen[i].add(o.label);
            b.classList.add("kandev-chosen", "mod-active");
          }
          b.setAttribute("aria-pressed", chosen[i].has(o.label) ? "true" : "false");
        });
        buttons.push(b);
        controls.push(b);
        row.append(b);
      });
      const other = el("input", "kandev-question-other widget-input");
      other.type = "text";
      other.placeholder = single ? "Other: type an answer, Enter sends it" : "Other (this text becomes the answer)";
      other.addEventListener("keydown", (e: any) => {
        e.stopPropagation(); // keep JupyterLab's notebook shortcuts out of the text box
        if (e.key === "Enter" && !e.isComposing) {
          e.preventDefault();
          if (single && other.value.trim()) send({ action: "answer", answers: { [q.question]: other.value.trim() } });
        }
      });
      others.push(other);
      controls.push(other);
      box.append(row, preview, other);
      root.append(box);
    });
    const bar = el("div", "kandev-question-bar");
    const submit = button("Submit answers", "kandev-question-submit mod-success", "Send the chosen answers");
    const skip = button("Skip", "kandev-question-skip", "Do not answer; Claude is told you chose not to");
    submit.addEventListener("click", () => send({ action: "answer", answers: collect() }));
    skip.addEventListener("click", () => send({ action: "skip" }));
    if (!single) bar.append(submit);
    bar.append(skip);
    controls.push(submit, skip);
    const error = el("div", "kandev-approval-error");
    error.style.color = "var(--jp-error-color1, #cf222e)";
    root.append(bar, error);
    const sync = () => {
      const off = !model.get("pending");
      for (const c of controls) c.disabled = off;
      error.textContent = model.get("error");
    };
    model.on("change:pending", sync);
    model.on("change:error", sync);
    sync();
    requestAnimationFrame(() => {
      const card = root.closest(".kandev-approval") || root;
      if (model.get("pending") && card.isConnected) card.scrollIntoView({ block: "nearest", inline: "nearest" });
    });
    return () => {
      model.off("change:pending", sync);
      model.off("change:error", sync);
    };
  },
};
