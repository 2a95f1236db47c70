// Relax Rollout Viewer: the keys that lead to other pages, and "?", the list of every key.
//   [ / ]  previous / next step     s  the step's statistics     t  the bucket's trends
//   g      the sample's group page  ?  the help dialog (#rv-keys, rendered by the server)
//   l      the step as a table (table.js moves between its rows)
// Moving between samples (arrows, j/k, Home/End) stays in viewer.js. Every URL comes from the
// dialog's data-* attributes or the sample's (data-group-url), which the server renders, so the
// keys work under any prefix. A key does nothing while the user types, or with Ctrl/Alt/Meta.
(function () {
  "use strict";

  // key -> what it opens, by page (data-page of the dialog: sample, stats, group, trends).
  var GOES = {
    "[": { sample: "prevStep", stats: "prevStepStats", table: "prevStepTable" },
    "]": { sample: "nextStep", stats: "nextStepStats", table: "nextStepTable" },
    s: { sample: "stats", group: "stats", table: "stats" },
    t: { sample: "trends", stats: "trends", group: "trends", table: "trends" },
    g: { sample: "group" },
    l: { sample: "table", stats: "table", group: "table" },
  };
  // The step's table, at the shown sample's row (data-table-url of the sample, when it has one).
  var TABLE_TARGETS = { prevStepTable: true, nextStepTable: true };
  var TEXT_INPUTS = /^(text|search|number|email|url|tel|password|date|datetime-local|month|time|week)$/;

  var opener = null; // the element that had the focus when the dialog opened

  function dialog() {
    return document.getElementById("rv-keys");
  }

  function isTyping(element) {
    if (!element || !element.tagName) return false;
    var tag = element.tagName;
    if (tag === "INPUT") return TEXT_INPUTS.test(element.type || "text");
    return tag === "SELECT" || tag === "TEXTAREA" || element.isContentEditable;
  }

  // The URL a key names on this page, or "" when it names none here.
  function urlFor(key) {
    var keys = dialog();
    var target = keys && GOES[key] && GOES[key][keys.getAttribute("data-page") || "sample"];
    if (!target) return "";
    if (target === "group") {
      var sample = document.getElementById("rv-sample");
      return (sample && sample.getAttribute("data-group-url")) || "";
    }
    if (target === "table") {
      var shown = document.getElementById("rv-sample");
      var at = shown && shown.getAttribute("data-table-url");
      if (at) return at;
    }
    var url = keys.dataset[target + "Url"] || "";
    if (url && (target === "prevStep" || target === "nextStep" || TABLE_TARGETS[target])) {
      // As the step selector does: the sort and filters carry over; `i`, the table's page and
      // its marked row are per step.
      var params = new URLSearchParams(window.location.search);
      params.delete("i");
      params.delete("page");
      params.delete("at");
      var query = params.toString();
      if (query) url += "?" + query;
    }
    return url;
  }

  function openHelp() {
    var keys = dialog();
    if (!keys || keys.open) return;
    opener = document.activeElement;
    keys.showModal();
    var close = document.getElementById("rv-keys-close");
    if (close) close.focus();
  }

  function closeHelp() {
    var keys = dialog();
    if (keys && keys.open) keys.close();
  }

  // Closing returns the focus to where it was, however the dialog closed (Esc, the button, ?).
  function restoreFocus() {
    var back = opener;
    opener = null;
    if (back && back.isConnected && back !== document.body && typeof back.focus === "function") {
      back.focus({ preventScroll: true });
    }
  }

  // Capture phase: while the dialog is open, no other script's keys act behind it (the arrow
  // keys of viewer.js would change the sample). What a key does by default (Tab, Esc, Enter
  // on the button) is left alone.
  document.addEventListener("keydown", function (event) {
    var keys = dialog();
    if (!keys || !keys.open) return;
    if (event.key === "?" && !event.ctrlKey && !event.altKey && !event.metaKey) {
      event.preventDefault();
      closeHelp();
    }
    event.stopPropagation();
  }, true);

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.altKey || event.metaKey || event.defaultPrevented) return;
    if (isTyping(document.activeElement)) return;
    if (event.key === "?") {
      event.preventDefault();
      openHelp();
      return;
    }
    if (!GOES[event.key]) return;
    var url = urlFor(event.key);
    if (!url) return;
    event.preventDefault();
    window.location.assign(url);
  });

  function init() {
    var keys = dialog();
    if (keys) keys.addEventListener("close", restoreFocus);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
