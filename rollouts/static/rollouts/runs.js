// Relax Rollout Viewer: the run picker while runs are still being indexed. Every 2 s it reads
// the same page again and swaps in the table's rows (and the count above it), until every run's reading is in: the page
// fills in where the reader is (no reload, no timed refresh that moves focus or scroll).

const EVERY_MS = 2000;

function refresh() {
  const table = document.getElementById("rv-runs");
  if (!table?.hasAttribute("data-indexing") || document.hidden) {
    if (table?.hasAttribute("data-indexing")) setTimeout(refresh, EVERY_MS);
    return;
  }
  fetch(window.location.href, { credentials: "same-origin", headers: { Accept: "text/html" } })
    .then((r) => (r.ok ? r.text() : Promise.reject(r.status)))
    .then((text) => {
      const page = new DOMParser().parseFromString(text, "text/html");
      const fresh = page.getElementById("rv-runs");
      if (!fresh) return;
      const kept = focusedIn(table.tBodies[0]);
      table.replaceChild(document.importNode(fresh.tBodies[0], true), table.tBodies[0]);
      if (kept) refocus(table.tBodies[0], kept);
      const count = document.getElementById("rv-runs-count");
      const freshCount = page.getElementById("rv-runs-count");
      if (count && freshCount) count.textContent = freshCount.textContent;
      if (!fresh.hasAttribute("data-indexing")) table.removeAttribute("data-indexing");
    })
    .catch(() => {
      /* asked again below */
    })
    .then(() => {
      if (table.hasAttribute("data-indexing")) setTimeout(refresh, EVERY_MS);
    });
}

// The keyboard focus on a row's link survives the swap: the same link of the same run's row,
// when the fresh rows still show it (else it stays on the page, as any removed element's).
function focusedIn(tbody) {
  const active = document.activeElement;
  const row = active && tbody.contains(active) ? active.closest("tr[data-run]") : null;
  if (!row) return null;
  const links = [...row.querySelectorAll("a")];
  return { run: row.dataset.run, index: links.indexOf(active) };
}

function refocus(tbody, kept) {
  const row = [...tbody.rows].find((r) => r.dataset.run === kept.run);
  row?.querySelectorAll("a")[kept.index]?.focus({ preventScroll: true });
}

export function startRuns() {
  setTimeout(refresh, EVERY_MS);
}
