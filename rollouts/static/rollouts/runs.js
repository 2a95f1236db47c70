// Relax Rollout Viewer: the run picker while runs are still being indexed. Every 2 s it reads
// the same page again and swaps in the table's rows, until every run's reading is in: the page
// fills in where the reader is (no reload, no timed refresh that moves focus or scroll).
(function () {
  "use strict";

  var EVERY_MS = 2000;

  function refresh() {
    var table = document.getElementById("rv-runs");
    if (!table || !table.hasAttribute("data-indexing") || document.hidden) {
      if (table && table.hasAttribute("data-indexing")) setTimeout(refresh, EVERY_MS);
      return;
    }
    fetch(window.location.href, { credentials: "same-origin", headers: { Accept: "text/html" } })
      .then(function (r) { return r.ok ? r.text() : Promise.reject(r.status); })
      .then(function (text) {
        var fresh = new DOMParser().parseFromString(text, "text/html").getElementById("rv-runs");
        if (!fresh) return;
        table.replaceChild(document.importNode(fresh.tBodies[0], true), table.tBodies[0]);
        if (!fresh.hasAttribute("data-indexing")) table.removeAttribute("data-indexing");
      })
      .catch(function () { /* asked again below */ })
      .then(function () {
        if (table.hasAttribute("data-indexing")) setTimeout(refresh, EVERY_MS);
      });
  }

  setTimeout(refresh, EVERY_MS);
})();
