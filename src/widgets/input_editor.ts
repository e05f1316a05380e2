// The field editors of an approval card's "Edit" (issue 27 point 6; ../input_editor.py).
// Bundled into approval.ts's module. Each field of the tool input gets its own
// editor: a monospace code editor for content / new_string / code / source (newlines and
// tabs kept; Tab inserts a tab), one line for command, JSON only for the fields left.
// read() builds the edited input object (JSON.stringify then escapes newlines itself).

export const KANDEV_CODE_FIELDS = ["content", "new_string", "code", "source"];
const KANDEV_LANGUAGES: Record<string, string> = {
  py: "Python", ipynb: "Python", js: "JavaScript", mjs: "JavaScript", ts: "TypeScript", tsx: "TypeScript",
  md: "Markdown", json: "JSON", sh: "Shell", bash: "Shell", toml: "TOML", yaml: "YAML", yml: "YAML",
  html: "HTML", css: "CSS", sql: "SQL", rs: "Rust", go: "Go", c: "C", h: "C", cpp: "C++", java: "Java",
  r: "R", txt: "plain text", csv: "CSV",
};

function kandevLanguage(input: any, key: any) {
  if (key === "code" || key === "source") {
    if (input.cell_type === "markdown") return "Markdown";
    if (!input.file_path && !input.notebook_path) return "Python";
  }
  const path = String(input.file_path || input.notebook_path || input.path || "");
  const dot = path.lastIndexOf(".");
  const ext = dot >= 0 ? path.slice(dot + 1).toLowerCase() : "";
  return KANDEV_LANGUAGES[ext] || (ext ? ext : "plain text");
}

function kandevEditorLabel(text: any) {
  const label = document.createElement("div");
  label.className = "kandev-edit-label";
  label.textContent = text;
  return label;
}

export function kandevInputEditor(input: any, onInput: any) {
  const el = document.createElement("div");
  el.className = "kandev-edit-fields";
  const editors: any = {};
  const rest: any = {};
  const keep = (e: any) => e.stopPropagation(); // JupyterLab's notebook shortcuts stay out of the editors
  for (const [key, value] of Object.entries(input)) {
    const multiline = typeof value === "string" && value.includes("\n");
    if (typeof value === "string" && (KANDEV_CODE_FIELDS.includes(key) || (key === "command" && multiline))) {
      const area = document.createElement("textarea");
      area.className = "kandev-edit-field kandev-edit-code widget-input";
      area.dataset.key = key;
      area.spellcheck = false;
      area.wrap = "off";
      area.value = value;
      area.rows = Math.min(24, Math.max(3, value.split("\n").length + 1));
      area.addEventListener("keydown", (e) => {
        keep(e);
        if (e.key === "Tab" && !e.shiftKey && !e.ctrlKey && !e.altKey && !e.metaKey) {
          e.preventDefault(); // a tab character, not the next control
          const { selectionStart: a, selectionEnd: b } = area;
          area.setRangeText("\t", a, b, "end");
          onInput();
        }
      });
      area.addEventListener("input", onInput);
      const lang = key === "command" ? "shell command" : kandevLanguage(input, key);
      el.append(kandevEditorLabel(`${key} (${lang})`), area);
      editors[key] = area;
    } else if (key === "command" && typeof value === "string") {
      const line = document.createElement("input");
      line.type = "text";
      line.className = "kandev-edit-field kandev-edit-line widget-input";
      line.dataset.key = key;
      line.spellcheck = false;
      line.value = value;
      line.addEventListener("keydown", keep);
      line.addEventListener("input", onInput);
      el.append(kandevEditorLabel("command"), line);
      editors[key] = line;
    } else {
      rest[key] = value;
    }
  }
  let json = null;
  if (Object.keys(rest).length) {
    json = document.createElement("textarea");
    json.className = "kandev-edit-field kandev-edit-input kandev-edit-json widget-input";
    json.spellcheck = false;
    json.value = JSON.stringify(rest, null, 2);
    json.rows = Math.min(12, Math.max(2, json.value.split("\n").length));
    json.addEventListener("keydown", keep);
    json.addEventListener("input", onInput);
    el.append(kandevEditorLabel(Object.keys(editors).length ? "other inputs (JSON)" : "input (JSON)"), json);
  }
  const read = () => {
    let others: any = {};
    if (json) {
      try {
        others = JSON.parse(json.value);
      } catch (err: any) {
        throw new Error(`other inputs: not valid JSON: ${err.message}`);
      }
      if (!others || typeof others !== "object" || Array.isArray(others)) {
        throw new Error("other inputs: must be a JSON object");
      }
    }
    const out: any = {};
    for (const key of Object.keys(input)) {
      if (key in editors) out[key] = editors[key].value;
      else if (key in others) out[key] = others[key];
    }
    for (const [key, value] of Object.entries(others)) if (!(key in out)) out[key] = value;
    return out;
  };
  const first = Object.values(editors)[0] || json;
  return { el, read, first, controls: [...Object.values(editors), ...(json ? [json] : [])] };
}
