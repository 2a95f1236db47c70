// Relax Rollout Viewer: the header's theme selector. The server renders the reader's choice
// from the rv-theme cookie (data-theme-choice on <html>, the option selected) and the
// stylesheet paints it, "system" through prefers-color-scheme, so nothing here has to run
// before the first paint. This stores a new choice in the cookie and keeps data-theme (the
// theme in effect, for whoever reads it) in step, the system's changes included.

const THEME_COOKIE = "rv-theme"; // "light", "dark" or "system", as rollouts_theme.py reads it
const CHOICES = ["system", "light", "dark"];
const YEAR_SECONDS = 365 * 24 * 3600;

let systemDark = null; // the system's dark-mode query, once started

export function themeOf(choice, systemIsDark) {
  return choice === "dark" || (choice === "system" && systemIsDark) ? "dark" : "light";
}

export function themeCookie(choice, path, secure) {
  const parts = [`${THEME_COOKIE}=${choice}`, `path=${path}`, `max-age=${YEAR_SECONDS}`];
  return [...parts, "SameSite=Lax", ...(secure ? ["Secure"] : [])].join("; ");
}

function applyTheme(choice) {
  const root = document.documentElement;
  root.setAttribute("data-theme-choice", choice);
  root.setAttribute("data-theme", themeOf(choice, Boolean(systemDark?.matches)));
}

function currentChoice() {
  const choice = document.documentElement.getAttribute("data-theme-choice");
  return CHOICES.includes(choice) ? choice : "system";
}

function storeChoice(select, choice) {
  const path = select.dataset.cookiePath || "/";
  // biome-ignore lint/suspicious/noDocumentCookie: one value from a fixed list (themeCookie), and the Cookie Store API is missing from some browsers the viewer supports
  document.cookie = themeCookie(choice, path, window.location.protocol === "https:");
}

// Earlier versions kept the choice in localStorage: carried over while no cookie says otherwise.
function earlierChoice() {
  if (document.cookie.split("; ").some((c) => c.startsWith(`${THEME_COOKIE}=`))) return null;
  try {
    const stored = localStorage.getItem(THEME_COOKIE);
    return stored === "light" || stored === "dark" ? stored : null;
  } catch (_error) {
    return null; // storage disabled
  }
}

export function startThemeSelect() {
  systemDark = window.matchMedia ? window.matchMedia("(prefers-color-scheme: dark)") : null;
  const select = document.getElementById("rv-theme");
  if (select) {
    const earlier = earlierChoice();
    if (earlier) {
      storeChoice(select, earlier);
      select.value = earlier;
    }
    applyTheme(earlier || currentChoice());
    select.addEventListener("change", () => {
      const choice = CHOICES.includes(select.value) ? select.value : "system";
      storeChoice(select, choice);
      applyTheme(choice);
    });
  } else {
    applyTheme(currentChoice());
  }
  systemDark?.addEventListener?.("change", () => applyTheme(currentChoice()));
}
