// Relax Rollout Viewer: long sample text made readable, beside the exact raw view.
// Reading mode (per field, remembered): proportional font, short lines, Markdown and LaTeX
// rendered by the vendored markdown-it and KaTeX, loaded from this page's own origin the first
// time a reader turns it on (their URLs are this script's data-* attributes). Think blocks
// remember whether the reader closed them.
//
// Sample text is untrusted. markdown-it runs with `html: false` (raw HTML in a sample stays
// text) and without images; its output is parsed by DOMParser (which runs nothing), then only
// an allowlist of elements and attributes is adopted into the page, everything else unwrapped
// to its text. KaTeX builds its nodes itself (katex.render, styles through the CSSOM, which the
// Content-Security-Policy allows) with `trust: false`.
(function () {
  "use strict";

  var READING_KEY = "rv-reading"; // fields shown in reading mode
  var THINK_KEY = "rv-think-closed"; // true: think blocks start closed

  var rv = window.rv;
  var load = rv.storage.load;
  var store = rv.storage.store;
  var urls = (document.currentScript && document.currentScript.dataset) || {};
  var renderer = null; // a promise of the markdown-it instance, once asked for

  // -- the vendored renderers, loaded on first use -------------------------------------------
  function addScript(url) {
    return new Promise(function (resolve, reject) {
      var script = document.createElement("script");
      script.src = url;
      script.onload = resolve;
      script.onerror = reject;
      document.head.appendChild(script);
    });
  }

  function renderers() {
    if (!renderer) {
      var link = document.createElement("link");
      link.rel = "stylesheet";
      link.href = urls.katexCss;
      document.head.appendChild(link);
      renderer = Promise.all([addScript(urls.markdown), addScript(urls.katex)]).then(function () {
        var md = window.markdownit({ html: false, linkify: false, typographer: false, breaks: true });
        md.disable(["image"]); // no request to anywhere a sample names
        return md;
      });
      renderer.catch(function () { renderer = null; }); // try again next time
    }
    return renderer;
  }

  // -- math: taken out before Markdown (which would eat its backslashes), put back after ----
  var OPEN = "\uE000", CLOSE = "\uE001"; // private-use characters: never in a sample's prose
  var MATH_RE = /\$\$([\s\S]+?)\$\$|\\\[([\s\S]+?)\\\]|\\\(([\s\S]+?)\\\)|\$(?=\S)([^$\n]*?\S)\$(?!\d)|\\boxed\s*\{/g;

  function extractMath(text) {
    var math = [];
    var out = "";
    var last = 0;
    var match;
    MATH_RE.lastIndex = 0;
    while ((match = MATH_RE.exec(text))) {
      var tex, display = false, end = MATH_RE.lastIndex;
      if (match[0].charAt(0) === "\\" && match[0].indexOf("boxed") === 1) {
        end = closingBrace(text, MATH_RE.lastIndex);
        if (end < 0) continue;
        tex = text.slice(match.index, end);
        MATH_RE.lastIndex = end;
      } else {
        tex = match[1] || match[2] || match[3] || match[4];
        display = match[1] !== undefined || match[2] !== undefined;
      }
      out += text.slice(last, match.index) + OPEN + math.length + CLOSE;
      math.push({ tex: tex, display: display, source: text.slice(match.index, end) });
      last = end;
    }
    return { text: out + text.slice(last), math: math };
  }

  function closingBrace(text, from) {
    for (var i = from, depth = 1; i < text.length && i < from + 2000; i++) {
      var c = text.charAt(i);
      if (c === "{") depth++;
      else if (c === "}" && --depth === 0) return i + 1;
    }
    return -1;
  }

  // -- the allowlist ------------------------------------------------------------------------
  var ALLOWED = { P: 1, BR: 1, EM: 1, STRONG: 1, CODE: 1, PRE: 1, BLOCKQUOTE: 1, UL: 1, OL: 1,
    LI: 1, HR: 1, TABLE: 1, THEAD: 1, TBODY: 1, TR: 1, TH: 1, TD: 1, A: 1, S: 1, DEL: 1 };
  var HEADINGS = { H1: 1, H2: 1, H3: 1, H4: 1, H5: 1, H6: 1 };

  // A copy of `node`'s children, in this document, with only allowed elements and attributes.
  function cleanChildren(node, into) {
    node.childNodes.forEach(function (child) {
      if (child.nodeType === Node.TEXT_NODE) {
        into.appendChild(document.createTextNode(child.nodeValue));
        return;
      }
      if (child.nodeType !== Node.ELEMENT_NODE) return;
      var tag = child.tagName;
      var copy;
      if (ALLOWED[tag]) {
        copy = document.createElement(tag);
        if (tag === "A") {
          var href = child.getAttribute("href") || "";
          if (/^(https?:|#|\/(?!\/))/i.test(href)) copy.setAttribute("href", href);
          copy.setAttribute("rel", "noopener noreferrer nofollow");
        } else if (tag === "OL" && /^\d{1,9}$/.test(child.getAttribute("start") || "")) {
          copy.setAttribute("start", child.getAttribute("start"));
        }
      } else if (HEADINGS[tag]) { // the page's own outline keeps its headings
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
    var walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    var nodes = [];
    while (walker.nextNode()) if (walker.currentNode.nodeValue.indexOf(OPEN) >= 0) nodes.push(walker.currentNode);
    var PLACE_RE = new RegExp(OPEN + "(\\d+)" + CLOSE, "g");
    nodes.forEach(function (node) {
      var inCode = node.parentNode.closest && node.parentNode.closest("code, pre");
      var parts = node.nodeValue.split(PLACE_RE); // text, index, text, index, ...
      var fragment = document.createDocumentFragment();
      parts.forEach(function (part, i) {
        if (i % 2 === 0) {
          if (part) fragment.appendChild(document.createTextNode(part));
          return;
        }
        var item = math[Number(part)];
        if (!item) return;
        if (inCode) {
          fragment.appendChild(document.createTextNode(item.source));
          return;
        }
        var span = document.createElement("span");
        span.className = item.display ? "rv-math rv-math-display" : "rv-math";
        try {
          window.katex.render(item.tex, span, { displayMode: item.display, throwOnError: false,
            trust: false, strict: "ignore", maxExpand: 500 });
        } catch (e) {
          span.textContent = item.source; // KaTeX refused it: show the source
        }
        fragment.appendChild(span);
      });
      node.replaceWith(fragment);
    });
  }

  function renderBlock(md, block) {
    var extracted = extractMath(block.textContent);
    var html = md.render(extracted.text);
    var parsed = new DOMParser().parseFromString(html, "text/html");
    var out = document.createElement("div");
    out.className = "rv-md";
    cleanChildren(parsed.body, out);
    putMathBack(out, extracted.math);
    return out;
  }

  // -- reading mode per section -------------------------------------------------------------
  function setReading(section, on) {
    var button = section.querySelector(".rv-read-toggle");
    if (!button) return;
    button.setAttribute("aria-pressed", on ? "true" : "false");
    section.classList.toggle("rv-reading", on);
    // Only blocks of plain text: special tokens and pad badges stay as they are.
    var blocks = Array.prototype.filter.call(section.querySelectorAll(".rv-block[data-md]"),
      function (block) { return block.children.length === 0; });
    if (!on) {
      blocks.forEach(function (block) {
        block.hidden = false;
        if (block.rvMd) block.rvMd.hidden = true;
      });
      return;
    }
    renderers().then(function (md) {
      if (!section.classList.contains("rv-reading")) return; // turned off meanwhile
      blocks.forEach(function (block) {
        if (!block.rvMd) {
          block.rvMd = renderBlock(md, block);
          block.after(block.rvMd);
        }
        block.rvMd.hidden = false;
        block.hidden = true;
      });
      section.setAttribute("data-rendered", "true");
    }, function () {
      section.setAttribute("data-rendered", "failed");
    });
  }

  // -- a text box opens on whole lines ----------------------------------------------------
  // viewer.js opens each box scrolled to its end; its top edge then falls wherever the text
  // does, often through a line. Shorten the box by the part of that line that shows, so it
  // opens on the next whole line (the end stays in view).
  function charRect(node, i) {
    var range = document.createRange();
    range.setStart(node, i);
    range.setEnd(node, Math.min(i + 1, node.length));
    var rects = range.getClientRects();
    return rects.length ? rects[0] : null;
  }

  function cutAtTop(box) {
    var top = box.getBoundingClientRect().top + box.clientTop;
    var walker = document.createTreeWalker(box, NodeFilter.SHOW_TEXT);
    var nodes = [];
    while (walker.nextNode()) {
      var node = walker.currentNode;
      if (node.nodeValue.trim() && node.parentElement.getClientRects().length) nodes.push(node);
    }
    function below(node, i) { // does this character end below the box's top edge?
      var rect = charRect(node, i);
      return !!rect && rect.bottom > top + 0.5;
    }
    var lo = 0, hi = nodes.length;
    while (lo < hi) {
      var mid = (lo + hi) >> 1;
      if (below(nodes[mid], nodes[mid].length - 1)) hi = mid; else lo = mid + 1;
    }
    if (lo === nodes.length) return 0;
    var text = nodes[lo], a = 0, b = text.length - 1;
    while (a < b) {
      var m = (a + b) >> 1;
      if (below(text, m)) b = m; else a = m + 1;
    }
    var rect = charRect(text, a);
    return rect && rect.top < top - 0.5 ? rect.bottom - top : 0;
  }

  function openOnWholeLines(main) {
    main.querySelectorAll(".rv-text").forEach(function (box) {
      if (box.scrollTop <= 0 || box.scrollTop + box.clientHeight < box.scrollHeight - 1) return;
      var cut = cutAtTop(box);
      if (cut <= 0) return;
      box.style.maxHeight = Math.floor(box.clientHeight - cut) + "px";
      box.scrollTop = box.scrollHeight;
    });
  }

  function setup() {
    var main = document.getElementById("rv-main");
    if (!main) return;
    var reading = load(READING_KEY, []);
    main.querySelectorAll(".rv-section").forEach(function (section) {
      var button = section.querySelector(".rv-read-toggle");
      if (!button) return;
      button.hidden = false;
      if (reading.indexOf(section.getAttribute("data-field")) >= 0) setReading(section, true);
    });
    if (load(THINK_KEY, false)) {
      main.querySelectorAll("details.rv-think[open]").forEach(function (d) { d.open = false; });
    }
    openOnWholeLines(main);
  }

  document.addEventListener("click", function (event) {
    var button = event.target instanceof Element && event.target.closest(".rv-read-toggle");
    var section = button && button.closest(".rv-section");
    if (!section) return;
    var field = section.getAttribute("data-field");
    var on = !section.classList.contains("rv-reading");
    var reading = load(READING_KEY, []).filter(function (f) { return f !== field; });
    if (on) reading.push(field);
    store(READING_KEY, reading);
    setReading(section, on);
  });

  // `toggle` does not bubble: listen while it goes down. The reader's last choice is the rule.
  document.addEventListener("toggle", function (event) {
    var details = event.target;
    if (details instanceof HTMLDetailsElement && details.classList.contains("rv-think")) {
      store(THINK_KEY, !details.open);
    }
  }, true);

  document.addEventListener("rv:main", setup); // viewer.js swapped in another sample
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", setup);
  else setup();
})();
