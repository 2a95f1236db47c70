// Relax Rollout Viewer: the Training page's live log. Keeps the last MAX_LINES lines the
// snapshots brought (each once, by its number `n`: the server numbers a job's lines on across
// its resumes), colours them by kind (stdout, stderr, progress, table, error), and filters
// them: a keyword, errors only, progress-JSON lines shown or not; "follow" keeps the newest line
// in view. The page's own marker lines (where a resumed attempt began) have no number and are
// not counted. Text goes in through textContent only.
//
//   var log = rvTraining.log({list, filter, errors, progress, follow, count});
//   log.add(lines); log.reset(); log.mark(text); log.last()
(function () {
  "use strict";

  var MAX_LINES = 4000; // as the specification's page keeps
  var ERROR_KINDS = { stderr: 1, error: 1 };
  var html = window.rv.element; // shared.js

  function create(el) {
    var lines = []; // [{n, text, kind, node}]
    var last = -Infinity; // the newest line number held

    function shown(line) {
      if (line.marker) return true; // where an attempt began stays in view whatever the filter
      var word = el.filter.value.trim().toLowerCase();
      if (el.errors.checked && !ERROR_KINDS[line.kind]) return false;
      if (!el.progress.checked && line.kind === "progress") return false;
      return !word || line.text.toLowerCase().indexOf(word) >= 0;
    }

    function nodeOf(line) {
      var node = html("li", "rv-log-line rv-log-" + (line.kind || "stdout"));
      node.setAttribute("data-n", line.n);
      node.setAttribute("data-kind", line.kind || "stdout");
      node.appendChild(html("span", "rv-log-n", String(line.n)));
      node.appendChild(html("span", "rv-log-text", line.text));
      return node;
    }

    function apply(line) {
      line.node.hidden = !shown(line);
    }
    function count() {
      var numbered = lines.filter(function (l) { return !l.marker; });
      var visible = numbered.filter(function (l) { return !l.node.hidden; }).length;
      var all = window.rvTraining.count(numbered.length);
      el.count.textContent = visible === numbered.length ? all + " lines"
        : window.rvTraining.count(visible) + " of " + all + " lines";
    }
    function follow() {
      if (el.follow.checked) el.list.scrollTop = el.list.scrollHeight;
    }

    // New lines (any older or repeated ones are skipped), the oldest dropped past MAX_LINES.
    function add(newLines) {
      var fresh = (newLines || []).filter(function (l) { return l.n > last; });
      if (!fresh.length) return;
      var fragment = document.createDocumentFragment();
      fresh.forEach(function (l) {
        var line = { n: l.n, text: String(l.text), kind: l.kind || "stdout" };
        line.node = nodeOf(line);
        apply(line);
        fragment.appendChild(line.node);
        lines.push(line);
        last = Math.max(last, l.n);
      });
      el.list.appendChild(fragment);
      var numbered = lines.filter(function (l) { return !l.marker; }).length, cut = 0;
      while (numbered > MAX_LINES) { // the oldest go (a marker before them with them)
        if (!lines[cut].marker) numbered -= 1;
        cut += 1;
      }
      lines.splice(0, cut).forEach(function (l) { l.node.remove(); });
      count();
      follow();
    }

    function reset() {
      lines = [];
      last = -Infinity;
      el.list.replaceChildren();
      count();
    }

    // A line of the page's own after the newest one (where a resumed attempt begins): no
    // number, so the server's next lines still follow on from `last`.
    function mark(text) {
      var line = { n: null, text: String(text), kind: "marker", marker: true };
      line.node = html("li", "rv-log-line rv-log-marker", text);
      line.node.setAttribute("data-kind", "marker");
      lines.push(line);
      el.list.appendChild(line.node);
      count();
      follow();
    }

    function refilter() {
      lines.forEach(apply);
      count();
      follow();
    }
    el.filter.addEventListener("input", refilter);
    el.errors.addEventListener("change", refilter);
    el.progress.addEventListener("change", refilter);
    el.follow.addEventListener("change", follow);
    // Scrolling up to read stops following; back at the bottom, it follows again.
    el.list.addEventListener("scroll", function () {
      var bottom = el.list.scrollHeight - el.list.clientHeight - el.list.scrollTop < 4;
      if (el.follow.checked !== bottom && document.activeElement !== el.follow) {
        el.follow.checked = bottom;
      }
    });
    count();
    return { add: add, reset: reset, mark: mark, last: function () { return last; } };
  }

  window.rvTraining = window.rvTraining || {};
  window.rvTraining.log = create;
})();
