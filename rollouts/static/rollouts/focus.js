// Relax Rollout Viewer: where the keyboard focus goes.
// - The sort, filter and step lists apply a choice when it is committed, not on every key:
//   on a closed <select> Chromium fires `change` for each arrow key or typed letter ("r" jumped
//   to response_length). Such a change is held back until Enter, or until the focus leaves the
//   list; Esc puts the applied choice back. A choice made with the mouse in the open list
//   applies at once, as before.
// - After viewer.js swaps <main> (rv:main) or grown.js replaces its links, the focus goes back to the same control in the new
//   <main> (by id, or by its section and class), else to <main> itself, never to <body>.
// - The skip link (#rv-skip, first in <body>) moves the focus to its target without changing
//   the URL's fragment (a fragment change would be a history entry viewer.js re-fetches).
const COMMITTED = "#rv-controls select, select#rv-step";

let keyed = null; // the select a key is being handled on, until the key's task ends
let releasing = false; // true while we re-dispatch a held-back change
let lastFocused = null; // the last element focused inside <main>
let lastKey = ""; // how to find that element again in a new <main>

function isCommitted(element) {
  return element instanceof HTMLSelectElement && element.matches(COMMITTED);
}

// The value the page was rendered with: what the URL applies now.
function appliedValue(select) {
  for (let i = 0; i < select.options.length; i++) {
    if (select.options[i].defaultSelected) return select.options[i].value;
  }
  return select.options.length ? select.options[0].value : "";
}

function isPending(select) {
  return select.value !== appliedValue(select);
}

function release(select) {
  if (!isPending(select)) return;
  releasing = true;
  try {
    select.dispatchEvent(new Event("change", { bubbles: true }));
  } finally {
    releasing = false;
  }
}

function onKeydown(event) {
  const select = event.target;
  if (!isCommitted(select)) return;
  if (event.key === "Enter") {
    if (isPending(select)) {
      event.preventDefault();
      release(select);
    }
    return;
  }
  if (event.key === "Escape" && isPending(select)) {
    select.value = appliedValue(select);
    return;
  }
  // A change this key makes fires within the key's own task; a change made later (a click
  // in the open list) is the user's choice and applies.
  keyed = select;
  setTimeout(() => {
    if (keyed === select) keyed = null;
  }, 0);
}

function onChange(event) {
  if (releasing || !isCommitted(event.target) || event.target !== keyed) return;
  event.stopPropagation();
}

function onFocusout(event) {
  const select = event.target;
  if (!isCommitted(select) || !isPending(select)) return;
  // After the focus has moved: when the window lost it, the select is still the active
  // element and nothing was committed.
  setTimeout(() => {
    if (select.isConnected && document.activeElement !== select) release(select);
  }, 0);
}

// -- the focus across fragment swaps ---------------------------------------------------
function keyOf(element) {
  if (element.id) return "#" + CSS.escape(element.id);
  const section = element.closest("[data-field]");
  const classes = Array.prototype.slice
    .call(element.classList)
    .map((name) => "." + CSS.escape(name))
    .join("");
  if (!section || !classes) return "";
  return (
    '[data-field="' +
    CSS.escape(section.getAttribute("data-field")) +
    '"] ' +
    element.tagName.toLowerCase() +
    classes
  );
}

function onFocusin(event) {
  const target = event.target;
  if (!(target instanceof Element) || !target.closest("#rv-main")) return;
  lastFocused = target;
  lastKey = target.id === "rv-main" ? "" : keyOf(target);
}

function focusRegion(element) {
  if (!element.hasAttribute("tabindex")) element.setAttribute("tabindex", "-1");
  element.focus({ preventScroll: true });
}

// After every rv:main listener (readable.js among them) has set the new <main> up; and after
// grown.js replaced the links of a growing step (rv:grown) in place.
function restoreFocusSoon() {
  Promise.resolve().then(restoreFocus);
}

function restoreFocus() {
  const main = document.getElementById("rv-main");
  const active = document.activeElement;
  if (!main || !lastFocused || lastFocused.isConnected) return;
  if (active && active !== document.body && active !== document.documentElement) return;
  const again = lastKey ? main.querySelector(lastKey) : null;
  if (again) again.focus({ preventScroll: true });
  if (!again || document.activeElement !== again) focusRegion(main);
}

// -- the skip link ---------------------------------------------------------------------
function onSkipClick(event) {
  const link = event.target instanceof Element && event.target.closest("#rv-skip");
  if (!link) return;
  const id = (link.getAttribute("href") || "").replace(/^#/, "");
  const target = document.getElementById(id) || document.getElementById("rv-main");
  if (!target) return;
  event.preventDefault();
  focusRegion(target);
  target.scrollIntoView({ block: "start" });
}

export function startFocus() {
  document.addEventListener("keydown", onKeydown, true);
  // Capture phase on the document: before viewer.js (bubble phase) navigates on `change`.
  document.addEventListener("change", onChange, true);
  document.addEventListener("focusout", onFocusout);
  document.addEventListener("focusin", onFocusin);
  document.addEventListener("rv:main", restoreFocusSoon);
  document.addEventListener("rv:grown", restoreFocusSoon);
  document.addEventListener("click", onSkipClick);
}
