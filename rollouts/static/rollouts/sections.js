// Relax Rollout Viewer: the sections of a sample (prompt, response, ... : one per field) and
// their buttons: collapse (remembered per field), raw view (kept across samples while the
// page is open), copy the exact text, back to the start of a long text; and a prompt's earlier
// turns (before its last user turn), folded unless the reader opened them (remembered).
// viewer.js sets each new <main> up with setupSections and hands its clicks to clickSection:
// the buttons live in <main>, which is replaced on every navigation.
import { load, store } from "./lib/storage.js";

const COLLAPSED_KEY = "rv-collapsed"; // localStorage: the fields shown collapsed
const EARLIER_KEY = "rv-earlier-open"; // localStorage: true when a prompt's earlier turns show

const rawMode = {}; // field -> true while its raw view is on (kept across samples)

export function setupSections(main) {
  const collapsed = load(COLLAPSED_KEY, []);
  main.querySelectorAll(".rv-section").forEach((section) => {
    const field = section.getAttribute("data-field");
    setCollapsed(section, collapsed.indexOf(field) >= 0);
    if (rawMode[field]) setRaw(section, true);
  });
  const earlierOpen = load(EARLIER_KEY, false) === true;
  main.querySelectorAll("details.rv-earlier").forEach((details) => {
    details.open = earlierOpen;
  });
}

// A click on `target`: true when it was one of a section's buttons (and is done).
export function clickSection(target) {
  const earlier = target.closest("details.rv-earlier > summary");
  if (earlier) {
    // The click (Enter and Space on the summary too) comes before the toggle: remember the
    // state it leads to, and let the browser open or close it.
    store(EARLIER_KEY, !earlier.parentElement.open);
    return true;
  }
  const section = target.closest(".rv-section");
  if (section && target.closest(".rv-collapse")) {
    const field = section.getAttribute("data-field");
    const collapsed = load(COLLAPSED_KEY, []).filter((f) => f !== field);
    const nowCollapsed = !section.classList.contains("rv-collapsed");
    if (nowCollapsed) collapsed.push(field);
    store(COLLAPSED_KEY, collapsed);
    setCollapsed(section, nowCollapsed);
    return true;
  }
  if (section && target.closest(".rv-raw-toggle")) {
    const name = section.getAttribute("data-field");
    rawMode[name] = !rawMode[name];
    setRaw(section, rawMode[name]);
    return true;
  }
  if (section && target.closest(".rv-copy")) {
    const raw = section.querySelector(".rv-raw");
    if (raw) copyText(raw.textContent, target.closest(".rv-copy"));
    return true;
  }
  if (section && target.closest(".rv-to-start")) {
    const box = section.querySelector(".rv-text");
    if (box) box.scrollTop = 0;
    return true;
  }
  return false;
}

function setCollapsed(section, collapsed) {
  const button = section.querySelector(".rv-collapse");
  const body = section.querySelector(".rv-section-body");
  if (!button || !body) return;
  body.hidden = collapsed;
  button.setAttribute("aria-expanded", collapsed ? "false" : "true");
  section.classList.toggle("rv-collapsed", collapsed);
}

function setRaw(section, on) {
  const raw = section.querySelector(".rv-raw");
  const formatted = section.querySelector(".rv-formatted");
  const button = section.querySelector(".rv-raw-toggle");
  if (!raw || !formatted) return;
  raw.hidden = !on;
  formatted.hidden = on;
  if (button) button.setAttribute("aria-pressed", on ? "true" : "false");
}

function copyText(text, button) {
  function done(ok) {
    const label = button.textContent;
    button.textContent = ok ? "copied" : "copy failed";
    setTimeout(() => {
      button.textContent = label;
    }, 1200);
  }
  if (navigator.clipboard && window.isSecureContext) {
    navigator.clipboard.writeText(text).then(
      () => {
        done(true);
      },
      () => {
        done(false);
      },
    );
    return true;
  }
  // Plain http behind a proxy is not a secure context: fall back to a selection copy.
  const area = document.createElement("textarea");
  area.value = text;
  area.setAttribute("readonly", "");
  area.className = "rv-offscreen";
  document.body.appendChild(area);
  area.select();
  let ok = false;
  try {
    ok = document.execCommand("copy");
  } catch (_e) {
    /* unsupported */
  }
  area.remove();
  done(ok);
}
