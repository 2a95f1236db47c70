// Relax Rollout Viewer: long sample text made readable, beside the exact raw view.
// Reading mode (per field, remembered): proportional font, short lines, Markdown and LaTeX
// rendered by the vendored markdown-it and KaTeX, loaded from this page's own origin the first
// time a reader turns it on (vendor/, beside this module: their URLs are relative to this
// module's own, so they follow it under any prefix). Think blocks remember whether the reader
// closed them.
//
// Sample text is untrusted. markdown-it runs with `html: false` (raw HTML in a sample stays
// text) and without images; its output is parsed by DOMParser (which runs nothing), then only
// an allowlist of elements and attributes is adopted into the page, everything else unwrapped
// to its text. KaTeX builds its nodes itself (katex.render, styles through the CSSOM, which the
// Content-Security-Policy allows) with `trust: false`.
import { CLOSE, extractMath, OPEN } from "./lib/math-text.js";
import { load, store } from "./lib/storage.js";
import { openOnWholeLines } from "./whole-lines.js";

const READING_KEY = "rv-reading"; // fields shown in reading mode
const THINK_KEY = "rv-think-closed"; // true: think blocks start closed
// The vendored renderers: UMD scripts that set window.markdownit and window.katex when loaded.
const VENDOR = {
  markdown: new URL("./vendor/markdown-it/markdown-it.umd.min.js", import.meta.url).href,
  katex: new URL("./vendor/katex/katex.min.js", import.meta.url).href,
  katexCss: new URL("./vendor/katex/katex.min.css", import.meta.url).href,
};
let renderer = null; // a promise of the markdown-it instance, once asked for

// -- the vendored renderers, loaded on first use -------------------------------------------
function addScript(url) {
  return new Promise((resolve, reject) => {
    const script = document.createElement("script");
    script.src = url;
    script.onload = resolve;
    script.onerror = reject;
    document.head.appendChild(script);
  });
}

function renderers() {
  if (!renderer) {
    const link = document.createElement("link");
    link.rel = "stylesheet";
    link.href = VENDOR.katexCss;
    document.head.appendChild(link);
    renderer = Promise.all([addScript(VENDOR.markdown), addScript(VENDOR.katex)]).then(() => {
      const md = window.markdownit({
        html: false,
        linkify: false,
        typographer: false,
        breaks: true,
      });
      md.disable(["image"]); // no request to anywhere a sample names
      return md;
    });
    renderer.catch(() => {
      renderer = null;
    }); // try again next time
  }
  return renderer;
}

// -- the allowlist ------------------------------------------------------------------------
const ALLOWED = {
  P: 1,
  BR: 1,
  EM: 1,
  STRONG: 1,
  CODE: 1,
  PRE: 1,
  BLOCKQUOTE: 1,
  UL: 1,
  OL: 1,
  LI: 1,
  HR: 1,
  TABLE: 1,
  THEAD: 1,
  TBODY: 1,
  TR: 1,
  TH: 1,
  TD: 1,
  A: 1,
  S: 1,
  DEL: 1,
};
const HEADINGS = { H1: 1, H2: 1, H3: 1, H4: 1, H5: 1, H6: 1 };

// A copy of `node`'s children, in this document, with only allowed elements and attributes.
function cleanChildren(node, into) {
  node.childNodes.forEach((child) => {
    if (child.nodeType === Node.TEXT_NODE) {
      into.appendChild(document.createTextNode(child.nodeValue));
      return;
    }
    if (child.nodeType !== Node.ELEMENT_NODE) return;
    const tag = child.tagName;
    let copy;
    if (ALLOWED[tag]) {
      copy = document.createElement(tag);
      if (tag === "A") {
        const href = child.getAttribute("href") || "";
        if (/^(https?:|#|\/(?!\/))/i.test(href)) copy.setAttribute("href", href);
        copy.setAttribute("rel", "noopener noreferrer nofollow");
      } else if (tag === "OL" && /^\d{1,9}$/.test(child.getAttribute("start") || "")) {
        copy.setAttribute("start", child.getAttribute("start"));
      }
    } else if (HEADINGS[tag]) {
      // the page's own outline keeps its headings
      copy = document.createElement("p");
      copy.className = "rv-md-heading";
    } else {
      cleanChildren(child, into); // unknown: its text only
      return;
    }
    cleanChildren(child, copy);
    into.appendChild(copy);
  });
  return into;
}

function putMathBack(root, math) {
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  const nodes = [];
  while (walker.nextNode())
    if (walker.currentNode.nodeValue.indexOf(OPEN) >= 0) nodes.push(walker.currentNode);
  const PLACE_RE = new RegExp(OPEN + "(\\d+)" + CLOSE, "g");
  nodes.forEach((node) => {
    const inCode = node.parentNode.closest?.("code, pre");
    const parts = node.nodeValue.split(PLACE_RE); // text, index, text, index, ...
    const fragment = document.createDocumentFragment();
    parts.forEach((part, i) => {
      if (i % 2 === 0) {
        if (part) fragment.appendChild(document.createTextNode(part));
        return;
      }
      const item = math[Number(part)];
      if (!item) return;
      if (inCode) {
        fragment.appendChild(document.createTextNode(item.source));
        return;
      }
      const span = document.createElement("span");
      span.className = item.display ? "rv-math rv-math-display" : "rv-math";
      try {
        window.katex.render(item.tex, span, {
          displayMode: item.display,
          throwOnError: false,
          trust: false,
          strict: "ignore",
          maxExpand: 500,
        });
      } catch (_e) {
        span.textContent = item.source; // KaTeX refused it: show the source
      }
      fragment.appendChild(span);
    });
    node.replaceWith(fragment);
  });
}

function renderBlock(md, block) {
  const extracted = extractMath(block.textContent);
  const html = md.render(extracted.text);
  const parsed = new DOMParser().parseFromString(html, "text/html");
  const out = document.createElement("div");
  out.className = "rv-md";
  cleanChildren(parsed.body, out);
  putMathBack(out, extracted.math);
  return out;
}

// -- reading mode per section -------------------------------------------------------------
function setReading(section, on) {
  const button = section.querySelector(".rv-read-toggle");
  if (!button) return;
  button.setAttribute("aria-pressed", on ? "true" : "false");
  section.classList.toggle("rv-reading", on);
  // Only blocks of plain text: special tokens and pad badges stay as they are.
  const blocks = Array.prototype.filter.call(
    section.querySelectorAll(".rv-block[data-md]"),
    (block) => block.children.length === 0,
  );
  if (!on) {
    blocks.forEach((block) => {
      block.hidden = false;
      if (block.rvMd) block.rvMd.hidden = true;
    });
    return;
  }
  renderers().then(
    (md) => {
      if (!section.classList.contains("rv-reading")) return; // turned off meanwhile
      blocks.forEach((block) => {
        if (!block.rvMd) {
          block.rvMd = renderBlock(md, block);
          block.after(block.rvMd);
        }
        block.rvMd.hidden = false;
        block.hidden = true;
      });
      section.setAttribute("data-rendered", "true");
    },
    () => {
      section.setAttribute("data-rendered", "failed");
    },
  );
}

function setup() {
  const main = document.getElementById("rv-main");
  if (!main) return;
  const reading = load(READING_KEY, []);
  main.querySelectorAll(".rv-section").forEach((section) => {
    const button = section.querySelector(".rv-read-toggle");
    if (!button) return;
    button.hidden = false;
    if (reading.indexOf(section.getAttribute("data-field")) >= 0) setReading(section, true);
  });
  if (load(THINK_KEY, false)) {
    main.querySelectorAll("details.rv-think[open]").forEach((d) => {
      d.open = false;
    });
  }
  openOnWholeLines(main);
}

function onReadToggle(event) {
  const button = event.target instanceof Element && event.target.closest(".rv-read-toggle");
  const section = button?.closest(".rv-section");
  if (!section) return;
  const field = section.getAttribute("data-field");
  const on = !section.classList.contains("rv-reading");
  const reading = load(READING_KEY, []).filter((f) => f !== field);
  if (on) reading.push(field);
  store(READING_KEY, reading);
  setReading(section, on);
}

function onThinkToggle(event) {
  const details = event.target;
  if (details instanceof HTMLDetailsElement && details.classList.contains("rv-think")) {
    store(THINK_KEY, !details.open);
  }
}

export function startReadable() {
  document.addEventListener("click", onReadToggle);
  // `toggle` does not bubble: listen while it goes down. The reader's last choice is the rule.
  document.addEventListener("toggle", onThinkToggle, true);
  document.addEventListener("rv:main", setup); // viewer.js swapped in another sample
  setup();
}
