// Relax Rollout Viewer: the stored theme, applied before the first paint. The one classic
// script of the app, on purpose: it is loaded synchronously in <head> (base.html), so the page
// is never painted in the other theme first. A module cannot do this (module scripts are
// deferred: they run after the document is parsed, possibly after a first paint), and the
// choice lives in localStorage, which only a script can read. theme-select.js keeps it current.
(() => {
  let choice = "system";
  try {
    choice = localStorage.getItem("rv-theme") || "system";
  } catch (_error) {
    // Storage can be disabled; the system preference still applies.
  }
  if (choice !== "light" && choice !== "dark") choice = "system";
  const dark =
    choice === "dark" ||
    (choice === "system" && window.matchMedia?.("(prefers-color-scheme: dark)").matches);
  const root = document.documentElement;
  root.setAttribute("data-theme-choice", choice);
  root.setAttribute("data-theme", dark ? "dark" : "light");
})();
