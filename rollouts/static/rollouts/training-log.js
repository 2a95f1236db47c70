// Relax Rollout Viewer: the Training page's live log. Keeps the last MAX_LINES lines the
// snapshots brought (each once, by its number `n`: the server numbers a job's lines on across
// its resumes), colours them by kind (stdout, stderr, progress, table, error), and filters
// them: a keyword, errors only, progress-JSON lines shown or not; "follow" keeps the newest line
// in view. The page's own marker lines (where a resumed attempt began) have no number and are
// not counted. Text goes in through textContent only.
//
//   const log = createLog({list, filter, errors, progress, follow, count});
//   log.add(lines); log.reset(); log.mark(text); log.last()
import { element as html } from "./lib/dom.js";
import { isShown, linesToDrop } from "./lib/log-filter.js";
import { formatCount } from "./lib/numbers.js";

const MAX_LINES = 4000; // as the specification's page keeps

export function createLog(el) {
  let lines = []; // [{n, text, kind, node}]
  let last = -Infinity; // the newest line number held

  function shown(line) {
    return isShown(line, {
      word: el.filter.value,
      errorsOnly: el.errors.checked,
      progress: el.progress.checked,
    });
  }

  function nodeOf(line) {
    const node = html("li", "rv-log-line rv-log-" + (line.kind || "stdout"));
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
    const numbered = lines.filter((l) => !l.marker);
    const visible = numbered.filter((l) => !l.node.hidden).length;
    const all = formatCount(numbered.length);
    el.count.textContent =
      visible === numbered.length ? all + " lines" : formatCount(visible) + " of " + all + " lines";
  }
  function follow() {
    if (el.follow.checked) el.list.scrollTop = el.list.scrollHeight;
  }

  // New lines (any older or repeated ones are skipped), the oldest dropped past MAX_LINES.
  function add(newLines) {
    const fresh = (newLines || []).filter((l) => l.n > last);
    if (!fresh.length) return;
    const fragment = document.createDocumentFragment();
    fresh.forEach((l) => {
      const line = { n: l.n, text: String(l.text), kind: l.kind || "stdout" };
      line.node = nodeOf(line);
      apply(line);
      fragment.appendChild(line.node);
      lines.push(line);
      last = Math.max(last, l.n);
    });
    el.list.appendChild(fragment);
    // The oldest go (a marker before them with them).
    lines.splice(0, linesToDrop(lines, MAX_LINES)).forEach((l) => {
      l.node.remove();
    });
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
    const line = { n: null, text: String(text), kind: "marker", marker: true };
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
  el.list.addEventListener("scroll", () => {
    const bottom = el.list.scrollHeight - el.list.clientHeight - el.list.scrollTop < 4;
    if (el.follow.checked !== bottom && document.activeElement !== el.follow) {
      el.follow.checked = bottom;
    }
  });
  count();
  return { add: add, reset: reset, mark: mark, last: () => last };
}
