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
