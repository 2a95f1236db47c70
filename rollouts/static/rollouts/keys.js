// Relax Rollout Viewer: the keys that lead to other pages, and "?", the list of every key.
//   [ / ]  previous / next step     s  the step's statistics     t  the bucket's trends
//   g      the sample's group page  ?  the help dialog (#rv-keys, rendered by the server)
//   l      the step as a table (table.js moves between its rows)
// Moving between samples (arrows, j/k, Home/End) stays in viewer.js. Every URL comes from the
// dialog's data-* attributes or the sample's (data-group-url), which the server renders, so the
// keys work under any prefix. A key does nothing while the user types, or with Ctrl/Alt/Meta.
import { isTyping } from "./lib/keyboard.js";
import { carryQuery } from "./lib/url.js";

// key -> what it opens, by page (data-page of the dialog: sample, stats, group, trends).
const GOES = {
  "[": { sample: "prevStep", stats: "prevStepStats", table: "prevStepTable" },
  "]": { sample: "nextStep", stats: "nextStepStats", table: "nextStepTable" },
  s: { sample: "stats", group: "stats", table: "stats" },
  t: { sample: "trends", stats: "trends", group: "trends", table: "trends" },
  g: { sample: "group" },
  l: { sample: "table", stats: "table", group: "table" },
};
// The step's table, at the shown sample's row (data-table-url of the sample, when it has one).
const TABLE_TARGETS = { prevStepTable: true, nextStepTable: true };

let opener = null; // the element that had the focus when the dialog opened

function dialog() {
  return document.getElementById("rv-keys");
}

// The URL a key names on this page, or "" when it names none here.
function urlFor(key) {
  const keys = dialog();
  const target = keys && GOES[key]?.[keys.getAttribute("data-page") || "sample"];
  if (!target) return "";
  if (target === "group") {
    const sample = document.getElementById("rv-sample");
    return sample?.getAttribute("data-group-url") || "";
  }
  if (target === "table") {
    const shown = document.getElementById("rv-sample");
    const at = shown?.getAttribute("data-table-url");
    if (at) return at;
  }
  let url = keys.dataset[target + "Url"] || "";
  if (url && (target === "prevStep" || target === "nextStep" || TABLE_TARGETS[target])) {
    // As the step selector does: the sort and filters carry over; `i`, the table's page and
    // its marked row are per step.
    url = carryQuery(url, window.location.search, ["i", "page", "at"]);
  }
  return url;
}

function openHelp() {
  const keys = dialog();
  if (!keys || keys.open) return;
  opener = document.activeElement;
  keys.showModal();
  const close = document.getElementById("rv-keys-close");
  if (close) close.focus();
}

function closeHelp() {
  const keys = dialog();
  if (keys?.open) keys.close();
}

// Closing returns the focus to where it was, however the dialog closed (Esc, the button, ?).
function restoreFocus() {
  const back = opener;
  opener = null;
  if (back?.isConnected && back !== document.body && typeof back.focus === "function") {
    back.focus({ preventScroll: true });
  }
}

// Capture phase: while the dialog is open, no other script's keys act behind it (the arrow
// keys of viewer.js would change the sample). What a key does by default (Tab, Esc, Enter
// on the button) is left alone.
function onKeydownWhileOpen(event) {
  const keys = dialog();
  if (!keys?.open) return;
  if (event.key === "?" && !event.ctrlKey && !event.altKey && !event.metaKey) {
    event.preventDefault();
    closeHelp();
  }
  event.stopPropagation();
}

function onKeydown(event) {
  if (event.ctrlKey || event.altKey || event.metaKey || event.defaultPrevented) return;
  if (isTyping(document.activeElement)) return;
  if (event.key === "?") {
    event.preventDefault();
    openHelp();
    return;
  }
  if (!GOES[event.key]) return;
  const url = urlFor(event.key);
  if (!url) return;
  event.preventDefault();
  window.location.assign(url);
}

export function startKeys() {
  // Capture phase: while the dialog is open, no other script's keys act behind it.
  document.addEventListener("keydown", onKeydownWhileOpen, true);
  document.addEventListener("keydown", onKeydown);
  const keys = dialog();
  if (keys) keys.addEventListener("close", restoreFocus);
}
