// Relax Rollout Viewer: which lines of the Training page's log are shown. Pure (no DOM):
// training-log.js applies it, tests/js checks it.

const ERROR_KINDS = new Set(["stderr", "error"]);

// Whether `line` ({text, kind, marker}) passes the filter ({word, errorsOnly, progress}): a
// keyword (case-insensitive, in the text), errors only (stderr and error lines), and whether
// progress-JSON lines show. The page's own marker lines (where a resumed attempt began) stay
// in view whatever the filter.
export function isShown(line, filter) {
  if (line.marker) return true;
  const word = filter.word.trim().toLowerCase();
  if (filter.errorsOnly && !ERROR_KINDS.has(line.kind)) return false;
  if (!filter.progress && line.kind === "progress") return false;
  return !word || line.text.toLowerCase().indexOf(word) >= 0;
}

// How many lines to drop from the front so that at most `max` numbered lines remain; a marker
// before the oldest kept numbered line goes with the lines before it.
export function linesToDrop(lines, max) {
  let numbered = lines.filter((l) => !l.marker).length;
  let cut = 0;
  while (numbered > max) {
    if (!lines[cut].marker) numbered -= 1;
    cut += 1;
  }
  return cut;
}
