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
      table.replaceChild(document.importNode(fresh.tBodies[0], true), table.tBodies[0]);
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

export function startRuns() {
  setTimeout(refresh, EVERY_MS);
}
