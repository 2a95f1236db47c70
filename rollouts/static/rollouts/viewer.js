// Relax Rollout Viewer: instant navigation on top of server-rendered pages.
// Every URL comes from the page (hrefs, data-* attributes, form actions): nothing here spells a
// path, so the same script works at "/", under a portal mount and behind a proxy prefix.
// Sample text only ever arrives as server-escaped HTML, parsed by DOMParser (which runs no
// script) and adopted into the page; the Content-Security-Policy forbids inline script anyway.
import { fetchFragment, forgetPrefetched, parseMain } from "./lib/fragments.js";
import { isPlainClick, isTyping } from "./lib/keyboard.js";
import { carryQuery, formQuery } from "./lib/url.js";
import { clickSection, setupSections } from "./sections.js";

let navSerial = 0;

function prefetchNeighbours() {
  const sample = document.getElementById("rv-sample");
  if (!sample) return;
  ["nextUrl", "prevUrl"].forEach((name) => {
    const url = sample.dataset[name];
    if (url)
      fetchFragment(url).catch(() => {
        /* shown when navigated to */
      });
  });
}

function showOffline(on) {
  const banner = document.getElementById("rv-offline");
  if (banner) banner.hidden = !on;
}

// Replace <main> with the page at `url`. `how`: "push" (new history entry), "replace", "pop".
function navigate(url, how, startMark) {
  const serial = ++navSerial;
  const mark = startMark || markStart();
  return fetchFragment(url).then(
    (result) => {
      if (serial !== navSerial) return; // a later navigation won
      const main = parseMain(result.html);
      if (!main) {
        // Not one of our fragments (a proxy's error page, say): let the browser show it.
        window.location.assign(url);
        return;
      }
      showOffline(false);
      swapMain(main);
      const finalUrl = main.getAttribute("data-page-url") || result.url;
      if (how === "push") history.pushState({ rv: true }, "", finalUrl);
      else if (how === "replace") history.replaceState({ rv: true }, "", finalUrl);
      measure(mark);
    },
    () => {
      if (serial !== navSerial) return;
      showOffline(true);
    },
  );
}

function markStart() {
  const name = "rv-nav-start-" + navSerial;
  if (window.performance && performance.mark) performance.mark(name);
  return name;
}
function measure(startName) {
  if (!(window.performance && performance.measure)) return;
  try {
    performance.measure("rv-nav", startName);
  } catch (_e) {
    /* the start mark was cleared; nothing to record */
  }
}

function swapMain(newMain) {
  const old = document.getElementById("rv-main");
  const adopted = document.adoptNode(newMain);
  old.replaceWith(adopted);
  const title = adopted.getAttribute("data-title");
  if (title) document.title = title;
  setupMain();
}

// -- the swappable region --------------------------------------------------------------
function setupMain() {
  const main = document.getElementById("rv-main");
  if (!main) return;
  setupSections(main);
  // The end of a generation is what people read first; a prompt whose earlier turns are
  // folded opens on the fold and its last question (the control would be out of sight).
  main.querySelectorAll(".rv-text").forEach((box) => {
    const fold = box.querySelector("details.rv-earlier");
    box.scrollTop = fold && !fold.open ? 0 : box.scrollHeight;
  });
  prefetchNeighbours();
  loadTokensCard(main);
  document.dispatchEvent(new CustomEvent("rv:main")); // readable.js: reading mode, think blocks
}

// The tokens card comes after the page (its own URL, as a fragment): it sits below the
// response and costs as much to build as a long response's text. On failure the card's own
// link stays, and opens the page with the card in it.
function loadTokensCard(main) {
  const card = main.querySelector("#rv-tokens[data-tokens-url]");
  if (!card) return;
  const serial = navSerial;
  fetchFragment(card.getAttribute("data-tokens-url")).then(
    (result) => {
      if (serial !== navSerial || !card.isConnected || result.status !== 200) return;
      const parsed = new DOMParser().parseFromString(result.html, "text/html");
      const loaded = parsed.getElementById("rv-tokens");
      if (loaded) card.replaceWith(document.adoptNode(loaded));
    },
    () => {
      /* the link stays */
    },
  );
}

// Delegated clicks: the buttons live in <main>, which is replaced on every navigation.
function onClick(event) {
  const target = event.target;
  if (!(target instanceof Element)) return;
  if (clickSection(target)) return;
  const link = target.closest("a[href]");
  if (
    link &&
    isInMain(link) &&
    isPlainClick(event) &&
    (link.id === "rv-prev" ||
      link.id === "rv-next" ||
      link.id === "rv-jump-prev" ||
      link.id === "rv-jump-next" ||
      link.id === "rv-prev-flagged" ||
      link.id === "rv-next-flagged")
  ) {
    event.preventDefault();
    navigate(link.href, "push");
  }
}

function isInMain(element) {
  return !!element.closest("#rv-main");
}

// -- controls --------------------------------------------------------------------------
function formUrl(form) {
  const url = new URL(form.action, window.location.href);
  url.search = formQuery(new FormData(form));
  return url.toString();
}

function onChange(event) {
  const target = event.target;
  if (!(target instanceof Element)) return;
  if (target.id === "rv-step") {
    const url = target.value;
    if (!url) return;
    // Keep sort and filters when moving to another step; `i` is per-step, drop it.
    window.location.assign(carryQuery(url, window.location.search, ["i"]));
    return;
  }
  const controls = target.closest("#rv-controls");
  if (controls) navigate(formUrl(controls), "push");
}

function onSubmit(event) {
  const form = event.target;
  if (!(form instanceof HTMLFormElement)) return;
  if (form.id === "rv-jump-form" || form.id === "rv-controls") {
    event.preventDefault();
    navigate(formUrl(form), "push").then(() => {
      const input = document.getElementById("rv-jump-input");
      if (input) input.blur();
    });
  }
}

// -- keyboard --------------------------------------------------------------------------
const KEYS = {
  ArrowRight: "nextUrl",
  j: "nextUrl",
  ArrowLeft: "prevUrl",
  k: "prevUrl",
  Home: "firstUrl",
  End: "lastUrl",
  // The next / previous flagged sample of the order (issue 30): f, and F (Shift+f).
  f: "nextFlaggedUrl",
  F: "prevFlaggedUrl",
};

function onKeydown(event) {
  if (event.ctrlKey || event.altKey || event.metaKey || event.defaultPrevented) return;
  if (isTyping(document.activeElement)) return;
  const which = KEYS[event.key];
  if (!which) return;
  // Home/End inside a focused text box scroll that box, as they would anywhere else.
  if (
    (event.key === "Home" || event.key === "End") &&
    document.activeElement &&
    document.activeElement.closest &&
    document.activeElement.closest(".rv-text")
  )
    return;
  const sample = document.getElementById("rv-sample");
  const url = sample?.dataset[which];
  if (!url) return;
  event.preventDefault();
  if (url === document.getElementById("rv-main").getAttribute("data-page-url")) return;
  navigate(url, "push", markStart());
}

function onPopstate() {
  // Within one step only <main> changes; another step (or bucket) has another header.
  const main = document.getElementById("rv-main");
  const stepUrl = main?.getAttribute("data-step-url");
  if (
    !stepUrl ||
    window.location.pathname.indexOf(new URL(stepUrl, window.location.href).pathname) !== 0
  ) {
    window.location.reload();
    return;
  }
  navigate(window.location.href, "pop");
}

// Every page: the step selector and the popstate rule are in every header; the sample page
// has the rest (sections, controls, keys).
export function startViewer() {
  // live.js fires this when the shown step grew: prefetched neighbours hold the old totals.
  document.addEventListener("rv:grown", () => {
    forgetPrefetched();
    prefetchNeighbours();
  });
  document.addEventListener("click", onClick);
  document.addEventListener("change", onChange);
  document.addEventListener("submit", onSubmit);
  document.addEventListener("keydown", onKeydown);
  window.addEventListener("popstate", onPopstate);
  setupMain();
  history.replaceState({ rv: true }, "", window.location.href);
}
