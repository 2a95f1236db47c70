// Runs in <head>, before the first paint: the stored theme applies with no flash of the other.
(function () {
  "use strict";
  var choice = "system";
  try {
    choice = localStorage.getItem("rv-theme") || "system";
  } catch (e) {
    // Storage can be disabled; the system preference still applies.
  }
  if (choice !== "light" && choice !== "dark") choice = "system";
  var dark = choice === "dark" ||
    (choice === "system" && window.matchMedia && matchMedia("(prefers-color-scheme: dark)").matches);
  var root = document.documentElement;
  root.setAttribute("data-theme-choice", choice);
  root.setAttribute("data-theme", dark ? "dark" : "light");
})();
