// Relax Rollout Viewer: keyboard rows on a step's table (#rv-sample-table).
//   ↑ / ↓ or k / j   the previous / next row (its link takes the focus)
//   Enter            the focused row's sample (the link's own action: works without this file)
//   ← / →            the previous / next page of rows (data-prev-url / data-next-url)
// The focus rests on each row's link, so Enter, the focus ring and screen readers all follow
// it; the row also gets `rv-row-focus` for its background. Every URL comes from the page.
(function () {
  "use strict";

  var MOVES = { ArrowDown: 1, j: 1, ArrowUp: -1, k: -1 };
  var PAGES = { ArrowLeft: "prevUrl", ArrowRight: "nextUrl" };

  function table() {
    return document.getElementById("rv-sample-table");
  }

  function rows() {
    var t = table();
    return t ? Array.prototype.slice.call(t.querySelectorAll("tbody tr.rv-table-row")) : [];
  }

  function isTyping(element) {
    if (!element || !element.tagName) return false;
    var tag = element.tagName;
    return tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA" || element.isContentEditable;
  }

  function focusRow(row) {
    rows().forEach(function (r) {
      r.classList.toggle("rv-row-focus", r === row);
    });
    var link = row.querySelector(".rv-row-link");
    if (link) link.focus();
    row.scrollIntoView({ block: "nearest" });
  }

  function currentRow() {
    var active = document.activeElement;
    var row = active && active.closest ? active.closest("tr.rv-table-row") : null;
    return row || (table() ? table().querySelector("tr.rv-row-focus") : null);
  }

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.altKey || event.metaKey || event.shiftKey || event.defaultPrevented) return;
    if (isTyping(document.activeElement) || !table()) return;
    var all = rows();
    if (MOVES[event.key] && all.length) {
      event.preventDefault();
      var row = currentRow();
      var at = row ? all.indexOf(row) + MOVES[event.key] : (MOVES[event.key] > 0 ? 0 : all.length - 1);
      focusRow(all[Math.min(Math.max(at, 0), all.length - 1)]);
      return;
    }
    if (event.key === "Enter") {
      var focused = currentRow();
      // On the row's link the browser follows it already; elsewhere in the row, open it here.
      if (focused && !(document.activeElement && document.activeElement.closest("a[href]"))) {
        event.preventDefault();
        window.location.assign(focused.getAttribute("data-url"));
      }
      return;
    }
    var which = PAGES[event.key];
    var url = which && table().dataset[which];
    if (url) {
      event.preventDefault();
      window.location.assign(url);
    }
  });

  // A row clicked anywhere (not only its link) takes the focus; a click on a link still opens.
  document.addEventListener("click", function (event) {
    var target = event.target;
    if (!(target instanceof Element) || target.closest("a[href]")) return;
    var row = target.closest("tr.rv-table-row");
    if (row) focusRow(row);
  });

  // A filter applies as soon as it is chosen (the Apply button is for pages without script).
  document.addEventListener("change", function (event) {
    var target = event.target;
    if (!(target instanceof Element)) return;
    var form = target.closest("#rv-table-controls");
    if (form) form.requestSubmit();
  });

  function init() {
    // Back from a sample (or ?at=): its row is marked; give it the focus, ready for ↑/↓.
    var marked = table() && table().querySelector("tr.rv-row-at");
    if (marked) focusRow(marked);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
