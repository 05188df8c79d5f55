// The book's own script (bookext). The theme binds its sidebar toggles with
// document.querySelector(".primary-toggle"), the first of the page's two buttons; on
// a phone that one is hidden and the visible one did nothing. Every other toggle
// now clicks the bound one, which opens the table of contents (or the page's
// contents, for the secondary toggle).
document.addEventListener("DOMContentLoaded", function () {
  ["primary", "secondary"].forEach(function (side) {
    var buttons = document.querySelectorAll("." + side + "-toggle");
    buttons.forEach(function (button, k) {
      if (k === 0) { return; }
      button.addEventListener("click", function (event) {
        event.preventDefault();
        event.stopImmediatePropagation();
        buttons[0].click();
      }, true);
    });
  });
});

// The page's contents on the right ("On this page") mark the section the reader is
// in: the last one whose heading is at or above the top of the screen (under the
// header); at the top of the page, the first; at its end, the last. The theme marks
// the last heading that entered the top 30% of the screen, which at the top of a
// page whose first sections are short is a later one (the list of results marked
// "Chapter 6"); its marks are replaced by these whenever it sets them.
document.addEventListener("DOMContentLoaded", function () {
  var nav = document.querySelector("#pst-page-toc-nav");
  if (!nav) { return; }
  var links = Array.from(nav.querySelectorAll("a[href^='#']"));
  if (links.length === 0) { return; }
  var targets = links.map(function (a) {
    var el = document.getElementById(decodeURIComponent(a.hash.slice(1)));
    return el ? (el.querySelector("h1, h2, h3, h4, h5, h6") || el) : null;
  });
  function current() {
    var root = document.documentElement;
    if (window.scrollY + window.innerHeight >= root.scrollHeight - 2) {
      return links[links.length - 1];
    }
    var header = document.querySelector("#pst-header");
    var top = (header ? header.getBoundingClientRect().height : 0) + 8;
    var k = 0;
    targets.forEach(function (t, i) {
      if (t && t.getBoundingClientRect().top <= top) { k = i; }
    });
    return links[k];
  }
  var watch = {attributes: true, subtree: true, attributeFilter: ["class"]};
  var observer = new MutationObserver(mark);
  function mark() {
    observer.disconnect();
    var want = current();
    links.forEach(function (a) {
      a.classList.toggle("active", a === want);
      if (a === want) { a.setAttribute("aria-current", "true"); }
      else { a.removeAttribute("aria-current"); }
    });
    nav.querySelectorAll(".toc-entry").forEach(function (li) {
      li.classList.toggle("active", li.contains(want));
    });
    observer.observe(nav, watch);
  }
  var pending = false;
  window.addEventListener("scroll", function () {
    if (pending) { return; }
    pending = true;
    window.requestAnimationFrame(function () { pending = false; mark(); });
  }, {passive: true});
  window.addEventListener("hashchange", function () { setTimeout(mark, 50); });
  mark();
});

// Controls are named by what they show (what a voice control user says): a button or
// link whose visible text is not in its aria-label is named by that text (the search
// button's "Search Ctrl + K"); the icons of a control named by its aria-label are
// decorative (the colour mode button's sun and moon); a fold's <summary> is named by
// its visible title ("Show the check"), not "Toggle hidden content"; and the unnamed
// <summary> that opens a part of the table of contents says what it opens.
function attnlibNames() {
  function visible(el) {
    return (el.innerText || "").replace(/\s+/g, " ").trim();
  }
  document.querySelectorAll("summary[aria-label]").forEach(function (s) {
    if (visible(s)) { s.removeAttribute("aria-label"); }
  });
  document.querySelectorAll("[aria-label]").forEach(function (el) {
    if (el.tagName === "SUMMARY") { return; }
    el.querySelectorAll("i, svg, .fa-solid, .fas").forEach(function (icon) {
      icon.setAttribute("aria-hidden", "true");
      icon.removeAttribute("title");
      icon.removeAttribute("aria-labelledby");
      icon.querySelectorAll("title").forEach(function (t) { t.remove(); });
    });
    var text = visible(el), label = el.getAttribute("aria-label");
    if (text && label.toLowerCase().indexOf(text.toLowerCase()) < 0) {
      el.setAttribute("aria-label", text);
    }
  });
  document.querySelectorAll("li.has-children > details > summary").forEach(function (s) {
    if (visible(s) || s.getAttribute("aria-label")) { return; }
    var link = s.closest("li").querySelector("a");
    var what = link ? visible(link) : "";
    s.setAttribute("aria-label", "Sections of " + (what || "this part"));
  });
}
if (document.readyState === "loading") {
  document.addEventListener("DOMContentLoaded", attnlibNames);
} else {
  attnlibNames();
}
window.addEventListener("load", attnlibNames);
