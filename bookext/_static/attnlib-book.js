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

// Proofs can be folded: each proof (sphinx-proof's div.proof with the id "proof",
// "proof-1", ...) gets a button above it that hides or shows its text. Proofs are
// open when the page loads; a link to a place inside a folded proof opens it.
document.addEventListener("DOMContentLoaded", function () {
  var proofs = document.querySelectorAll("div.proof.admonition[id^='proof']");
  proofs.forEach(function (proof, k) {
    var body = document.createElement("div");
    body.className = "attnlib-proof-body";
    body.id = "attnlib-proof-body-" + k;
    while (proof.firstChild) { body.appendChild(proof.firstChild); }
    var button = document.createElement("button");
    button.type = "button";
    button.className = "attnlib-fold";
    button.setAttribute("aria-controls", body.id);
    function set(open) {
      body.hidden = !open;
      button.setAttribute("aria-expanded", String(open));
      button.textContent = open ? "Hide the proof" : "Show the proof";
    }
    button.addEventListener("click", function () { set(body.hidden); });
    proof.appendChild(button);
    proof.appendChild(body);
    set(true);
    window.addEventListener("hashchange", function () {
      var target = document.getElementById(location.hash.slice(1));
      if (target && body.contains(target)) { set(true); target.scrollIntoView(); }
    });
  });
});
