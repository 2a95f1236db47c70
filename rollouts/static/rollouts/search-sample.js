// Relax Rollout Viewer: a sample page opened from a search (#rv-search-nav, rendered only then).
// Marks what the query matched in each searched field (data-terms: field -> the matched texts,
// found by the server in the decoded text) by splitting text nodes around them, never through
// innerHTML, and brings the first mark into view. ←/→ already go to the neighbouring matches
// (the server made them data-prev-url/data-next-url); a match in another step is opened as a
// whole page, since the header (step selector, live poll) belongs to the step.
(function () {
  "use strict";

  var SKIP = { BUTTON: 1, SCRIPT: 1, STYLE: 1, MARK: 1 };

  function nav() { return document.getElementById("rv-search-nav"); }

  function markIn(root, terms) {
    var walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT, {
      acceptNode: function (node) {
        var parent = node.parentElement;
        return parent && !parent.closest("button, script, style, mark") && !SKIP[parent.tagName]
          ? NodeFilter.FILTER_ACCEPT : NodeFilter.FILTER_REJECT;
      },
    });
    var nodes = [];
    while (walker.nextNode()) nodes.push(walker.currentNode);
    var longestFirst = terms.slice().sort(function (a, b) { return b.length - a.length; });
    nodes.forEach(function (node) {
      var text = node.nodeValue;
      for (;;) {
        var best = -1, term = null;
        longestFirst.forEach(function (t) {
          var at = text.indexOf(t);
          if (at >= 0 && (best < 0 || at < best)) { best = at; term = t; }
        });
        if (best < 0) return;
        var match = node.splitText(best);
        node = match.splitText(term.length);
        var mark = document.createElement("mark");
        mark.className = "rv-search-mark";
        match.replaceWith(mark);
        mark.appendChild(match);
        text = node.nodeValue;
      }
    });
  }

  function highlight() {
    var banner = nav();
    if (!banner) return;
    var terms = {};
    try {
      terms = JSON.parse(banner.getAttribute("data-terms") || "{}");
    } catch (e) { return; }
    Object.keys(terms).forEach(function (field) {
      document.querySelectorAll(".rv-section[data-field='" + field + "'] .rv-section-body")
        .forEach(function (body) { markIn(body, terms[field]); });
    });
    var first = document.querySelector("#rv-sample .rv-search-mark");
    if (first) {
      var think = first.closest("details");
      if (think && !think.open) think.open = true; // a match inside a closed think block
      first.classList.add("rv-current-mark");
      first.scrollIntoView({ block: "center" });
    }
  }

  // A neighbouring match in another step: a whole page load instead of viewer.js's swap.
  function crossStepUrl(which) {
    var banner = nav(), sample = document.getElementById("rv-sample");
    if (!banner || !sample) return null;
    var other = banner.getAttribute(which === "next" ? "data-next-step" : "data-prev-step");
    if (!other || other === banner.getAttribute("data-step")) return null;
    return sample.getAttribute(which === "next" ? "data-next-url" : "data-prev-url");
  }

  var KEYS = { ArrowRight: "next", j: "next", ArrowLeft: "prev", k: "prev" };
  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.altKey || event.metaKey) return;
    var active = document.activeElement;
    if (active && (active.tagName === "INPUT" || active.tagName === "SELECT" ||
        active.tagName === "TEXTAREA" || active.isContentEditable)) return;
    var url = KEYS[event.key] && crossStepUrl(KEYS[event.key]);
    if (!url) return;
    event.preventDefault();
    event.stopPropagation();
    window.location.assign(url);
  }, true);
  document.addEventListener("click", function (event) {
    var link = event.target instanceof Element && event.target.closest("#rv-prev, #rv-next, #rv-jump-prev, #rv-jump-next");
    if (!link || event.button !== 0 || event.ctrlKey || event.metaKey || event.shiftKey) return;
    var url = crossStepUrl(/next/.test(link.id) ? "next" : "prev");
    if (!url) return;
    event.preventDefault();
    event.stopPropagation();
    window.location.assign(url);
  }, true);

  // viewer.js has set up the first <main> before this deferred script ran: mark it now, and
  // every <main> a navigation swaps in.
  document.addEventListener("rv:main", highlight);
  highlight();
})();
