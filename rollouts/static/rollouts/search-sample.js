// Relax Rollout Viewer: a sample page opened from a search (#rv-search-nav, rendered only then).
// Marks what the query matched in each searched field (data-terms: field -> the matched texts,
// found by the server in the decoded text) by splitting text nodes around them, never through
// innerHTML, and brings the first mark into view. ←/→ already go to the neighbouring matches
// (the server made them data-prev-url/data-next-url); a match in another step is opened as a
// whole page, since the header (step selector, live poll) belongs to the step.
import { isTyping } from "./lib/keyboard.js";

const SKIP = { BUTTON: 1, SCRIPT: 1, STYLE: 1, MARK: 1 };

function nav() {
  return document.getElementById("rv-search-nav");
}

function markIn(root, terms) {
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT, {
    acceptNode: (node) => {
      const parent = node.parentElement;
      return parent && !parent.closest("button, script, style, mark") && !SKIP[parent.tagName]
        ? NodeFilter.FILTER_ACCEPT
        : NodeFilter.FILTER_REJECT;
    },
  });
  const nodes = [];
  while (walker.nextNode()) nodes.push(walker.currentNode);
  const longestFirst = terms.slice().sort((a, b) => b.length - a.length);
  nodes.forEach((node) => {
    let text = node.nodeValue;
    for (;;) {
      let best = -1;
      let term = null;
      longestFirst.forEach((t) => {
        const at = text.indexOf(t);
        if (at >= 0 && (best < 0 || at < best)) {
          best = at;
          term = t;
        }
      });
      if (best < 0) return;
      const match = node.splitText(best);
      node = match.splitText(term.length);
      const mark = document.createElement("mark");
      mark.className = "rv-search-mark";
      match.replaceWith(mark);
      mark.appendChild(match);
      text = node.nodeValue;
    }
  });
}

function highlight() {
  const banner = nav();
  if (!banner) return;
  let terms = {};
  try {
    terms = JSON.parse(banner.getAttribute("data-terms") || "{}");
  } catch (_e) {
    return;
  }
  Object.keys(terms).forEach((field) => {
    document
      .querySelectorAll(".rv-section[data-field='" + field + "'] .rv-section-body")
      .forEach((body) => {
        markIn(body, terms[field]);
      });
  });
  const first = document.querySelector("#rv-sample .rv-search-mark");
  if (first) {
    // A match inside a closed think block, or a prompt's folded earlier turns: open them all.
    for (
      let closed = first.closest("details");
      closed;
      closed = closed.parentElement.closest("details")
    ) {
      closed.open = true;
    }
    first.classList.add("rv-current-mark");
    first.scrollIntoView({ block: "center" });
  }
}

// A neighbouring match in another step: a whole page load instead of viewer.js's swap.
function crossStepUrl(which) {
  const banner = nav();
  const sample = document.getElementById("rv-sample");
  if (!banner || !sample) return null;
  const other = banner.getAttribute(which === "next" ? "data-next-step" : "data-prev-step");
  if (!other || other === banner.getAttribute("data-step")) return null;
  return sample.getAttribute(which === "next" ? "data-next-url" : "data-prev-url");
}

const KEYS = { ArrowRight: "next", j: "next", ArrowLeft: "prev", k: "prev" };
function onKeydown(event) {
  if (event.ctrlKey || event.altKey || event.metaKey) return;
  if (isTyping(document.activeElement)) return;
  const url = KEYS[event.key] && crossStepUrl(KEYS[event.key]);
  if (!url) return;
  event.preventDefault();
  event.stopPropagation();
  window.location.assign(url);
}
function onClick(event) {
  const link =
    event.target instanceof Element &&
    event.target.closest("#rv-prev, #rv-next, #rv-jump-prev, #rv-jump-next");
  if (!link || event.button !== 0 || event.ctrlKey || event.metaKey || event.shiftKey) return;
  const url = crossStepUrl(/next/.test(link.id) ? "next" : "prev");
  if (!url) return;
  event.preventDefault();
  event.stopPropagation();
  window.location.assign(url);
}

// Only on a sample page opened from a search (#rv-search-nav). Capture phase: before
// viewer.js's keys and clicks, which would swap in a match of another step as one of this one.
export function startSearchMarks() {
  if (!nav()) return;
  document.addEventListener("keydown", onKeydown, true);
  document.addEventListener("click", onClick, true);
  // viewer.js has set up the first <main> before this ran: mark it now, and every <main> a
  // navigation swaps in.
  document.addEventListener("rv:main", highlight);
  highlight();
}
