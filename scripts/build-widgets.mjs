// Build the page code of kandev_nb's anywidgets (src/widgets/*.ts, style/widgets/*.css) into
// the ES modules and stylesheets the Python widgets load (their _esm / _css), written to
// kandev_nb/static/: generated (not in git), shipped in the wheel and the sdist (pyproject's
// artifacts). Run by `jlpm build`, `jlpm build:prod` and `jlpm build:widgets`.
import { build } from "esbuild";
import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const outdir = join(root, "kandev_nb", "static");

// One module per widget; the files they import (answer_actions, cell_language, input_editor,
// messages) are bundled into them.
const MODULES = [
  "bridge",
  "bridge_stub",
  "notify",
  "approval",
  "questions",
  "stream_text",
  "kandev_lib",
  "permissions_panel",
  "turn_actions",
];
const styles = readdirSync(join(root, "style", "widgets")).filter((name) => name.endsWith(".css"));

const common = { bundle: true, target: "es2020", legalComments: "eof", outdir, logLevel: "warning" };
// The library (marked + highlight.js) is minified whole, as it always was. The widgets' own
// modules keep their names (a profile names markBlock, kandevDecorateHost: benchmarks/_trace_split.py).
const sources = (names) => names.map((name) => join(root, "src", "widgets", `${name}.ts`));
await build({ ...common, entryPoints: sources(["kandev_lib"]), format: "esm", minify: true });
await build({
  ...common,
  entryPoints: sources(MODULES.filter((name) => name !== "kandev_lib")),
  format: "esm",
  minifyWhitespace: true,
  minifySyntax: true,
});
await build({ ...common, entryPoints: styles.map((name) => join(root, "style", "widgets", name)), minify: true });
console.log(`wrote ${MODULES.length} modules and ${styles.length} stylesheets to kandev_nb/static/`);
