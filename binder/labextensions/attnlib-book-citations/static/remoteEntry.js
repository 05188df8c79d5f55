// The book's citations in JupyterLab: jupyterlab-myst prints a citation it cannot
// resolve (all of them: it reads no bibliography) as its key with a warning sign;
// this plugin shows the label of the book's bibliography instead, from
// citations.json beside this file (written by python -m tools.lab_citations from
// book/references.bib). A module-federation container, as JupyterLab loads an
// extension, written by hand: no build step, no dependency.
var _JUPYTERLAB;
(function () {
  "use strict";
  var NAME = "attnlib-book-citations";
  var HERE = document.currentScript ? document.currentScript.src : "";
  var DATA = HERE.replace(/[^/]*$/, "") + "citations.json";
  var STYLE = [
    ".attnlib-cite { color: inherit !important; }",
    ".attnlib-cite > svg { display: none; }",
    ".cite-group.attnlib-parenthetical::before { content: '['; }",
    ".cite-group.attnlib-parenthetical::after { content: ']'; }"
  ].join("\n");

  function show(citations, span) {
    var last = span.lastChild;
    var key = span.getAttribute("data-cite-key") ||
      (last && last.nodeType === 3 ? last.nodeValue : span.textContent).trim();
    var entry = citations[key];
    if (!entry) { return; }
    // jupyterlab-myst draws {cite}`a` as a lone citation, and {cite}`a,b` and
    // {cite:t}`a` alike as a group; the book writes {cite:t} with one key only
    var group = span.parentElement && span.parentElement.closest(".cite-group");
    var narrative = group !== null && group.children.length === 1;
    var text = narrative ? entry.names + " [" + entry.year + "]"
                         : entry.names + ", " + entry.year;
    if (!group) { text = "[" + text + "]"; }
    if (group && !narrative && !group.classList.contains("attnlib-parenthetical")) {
      group.classList.add("attnlib-parenthetical");
    }
    if (!last || last.nodeType !== 3) {
      last = document.createTextNode("");
      span.appendChild(last);
    }
    if (last.nodeValue !== text) { last.nodeValue = text; }
    if (span.getAttribute("data-cite-key") !== key) {
      span.setAttribute("data-cite-key", key);
    }
    if (span.title !== entry.reference) { span.title = entry.reference; }
    if (!span.classList.contains("attnlib-cite")) {
      span.classList.add("attnlib-cite");
    }
  }

  function showAll(citations) {
    var found = document.querySelectorAll(
      '.jp-Notebook span[title="Citation Not Found"], .jp-Notebook span.attnlib-cite'
    );
    for (var i = 0; i < found.length; i++) { show(citations, found[i]); }
  }

  function start(citations) {
    var style = document.createElement("style");
    style.textContent = STYLE;
    document.head.appendChild(style);
    var pending = false;
    new MutationObserver(function () {
      if (pending) { return; }
      pending = true;
      window.requestAnimationFrame(function () {
        pending = false;
        showAll(citations);
      });
    }).observe(document.body, {childList: true, subtree: true, characterData: true});
    showAll(citations);
  }

  var plugin = {
    id: NAME + ":plugin",
    description: "Citations shown with the labels of the book's bibliography.",
    autoStart: true,
    activate: function () {
      fetch(DATA)
        .then(function (response) { return response.json(); })
        .then(start)
        .catch(function (error) {
          console.error(NAME + ": no citations from " + DATA, error);
        });
    }
  };

  (_JUPYTERLAB = typeof _JUPYTERLAB === "undefined" ? {} : _JUPYTERLAB)[NAME] = {
    init: function () {},
    get: function (module) {
      if (module !== "./extension") {
        return Promise.reject(new Error("no module " + module + " in " + NAME));
      }
      return Promise.resolve(function () {
        return {__esModule: true, default: plugin};
      });
    }
  };
})();
