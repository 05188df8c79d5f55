// Typesets the book's formulas with KaTeX while the book is built (bookext/katex.py).
//
//   node katex_render.js KATEX_JS MACROS_JSON
//
// reads one request a line on stdin, {"tex": "...", "display": true|false}, and
// answers each with one line on stdout: {"html": "..."} or {"error": "..."}.
// KaTeX writes the formula twice: HTML for the eye and MathML for screen readers
// (visually hidden), whose <annotation encoding="application/x-tex"> keeps the TeX
// source, which no browser shows: the search's summaries read it (bookext/search.py).
"use strict";
const readline = require("readline");
const katex = require(process.argv[2]);
const macros = JSON.parse(process.argv[3] || "{}");

const lines = readline.createInterface({ input: process.stdin, terminal: false });
lines.on("line", (line) => {
  let reply;
  try {
    const request = JSON.parse(line);
    const html = katex.renderToString(request.tex, {
      displayMode: Boolean(request.display),
      // a copy: \gdef in one formula must not define a macro for the next ones
      macros: { ...macros },
      throwOnError: true,
      // what LaTeX itself would not typeset (the PDF is built from the same TeX)
      strict: "error",
      output: "htmlAndMathml",
    });
    reply = { html };
  } catch (err) {
    reply = { error: String(err && err.message ? err.message : err) };
  }
  process.stdout.write(JSON.stringify(reply) + "\n");
});
