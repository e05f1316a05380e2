// Bundle src/lib.js (marked + highlight.js core) into one minified ESM file that the
// KandevLib anywidget ships as its _esm. Run: npm install && npm run build.
// The output is committed, so installing kandev_nb needs no Node.js.
import { build } from "esbuild";

await build({
  entryPoints: ["src/lib.js"],
  bundle: true,
  minify: true,
  format: "esm",
  target: "es2020",
  legalComments: "eof",
  outfile: "../assets/kandev_lib.js",
});
console.log("wrote ../assets/kandev_lib.js");
