// Relax Rollout Viewer: the header's theme selector, and the system theme followed while the
// choice is "system". theme.js (a classic script in <head>) applied the stored choice before
// the first paint; this keeps it in step afterwards. The rule of which theme a choice means is
// the same as theme.js's, which cannot import it (a module would run after the first paint).

const THEME_KEY = "rv-theme"; // localStorage: "light", "dark" or "system", as theme.js reads it

let systemDark = null; // the system's dark-mode query, once started

function applyTheme(choice) {
  const root = document.documentElement;
  const dark = choice === "dark" || (choice === "system" && systemDark?.matches);
  root.setAttribute("data-theme-choice", choice);
  root.setAttribute("data-theme", dark ? "dark" : "light");
}

function currentChoice() {
  return document.documentElement.getAttribute("data-theme-choice") || "system";
}

export function startThemeSelect() {
  systemDark = window.matchMedia ? window.matchMedia("(prefers-color-scheme: dark)") : null;
  const select = document.getElementById("rv-theme");
  if (select) {
    select.value = currentChoice();
    select.addEventListener("change", () => {
      try {
        localStorage.setItem(THEME_KEY, select.value); // a plain string, as theme.js reads it
      } catch (_error) {
        // Storage disabled: the choice lasts for this page only.
      }
      applyTheme(select.value);
    });
  }
  systemDark?.addEventListener?.("change", () => applyTheme(currentChoice()));
}
