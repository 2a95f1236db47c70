// Relax Rollout Viewer: the Training page's episode table (the run's episode CSV), a page of
// rows at a time, newest first, with Newest / Newer / Older buttons and how many episodes
// there are.
// The snapshot carries one page (`episodes`: {columns, rows (oldest first), total, offset
// (newest rows skipped), limit}); the page asks for another with `episodes_offset` and
// `episodes_limit`. On the first page the table follows the newest rows live; on an older page
// it stays on the same episodes while new ones arrive, so what is being read does not move:
// the offset counts from the newest row, which moves on between two answers, so an older page
// asks for more rows than it shows (the slack: twice what arrived between the last answers)
// and shows its own out of them. Episodes are numbered from the oldest, as the CSV holds them.
//
//   const table = createEpisodes({table, count, range, newest, newer, older}, onPage);
//   table.params() -> {episodes_offset, episodes_limit} or {}; table.render(data); table.reset()
import { element as html } from "./lib/dom.js";
import { finite, formatCount, formatNumber } from "./lib/numbers.js";

const LIMIT = 200; // rows a page (the server's default)
const SLACK = [50, 800]; // extra rows an older page asks for: at least, at most (limit <= 1000)

export function createEpisodes(el, onPage) {
  let end = null; // the episodes shown end here (counted from the oldest); null: the newest
  let known = null; // the total the last answer gave
  let offset = 0; // with no total known: the plain offset asked for
  let slack = SLACK[0];

  function wantedOffset() {
    if (end === null) return 0;
    return finite(known) ? Math.max(0, known - end) : offset;
  }
  function params() {
    const at = wantedOffset();
    if (!(at > 0)) return {};
    return { episodes_offset: at, episodes_limit: LIMIT + (end !== null ? slack : 0) };
  }

  function cell(value) {
    return html(
      "td",
      "",
      finite(value) ? formatNumber(value) : value === null ? "" : String(value),
    );
  }

  function render(data) {
    data = data || {};
    let rows = data.rows || [];
    const total = finite(data.total) ? data.total : null;
    let at = finite(data.offset) ? data.offset : 0;
    const paged = finite(data.offset);
    if (total !== null && finite(known) && total > known) {
      slack = Math.min(Math.max(2 * (total - known), SLACK[0]), SLACK[1]);
    }
    known = total;
    el.count.textContent =
      total !== null
        ? formatCount(total) + " episodes"
        : rows.length
          ? formatCount(rows.length) + " episodes shown"
          : "no episodes yet";
    el.table.setAttribute("data-total", total === null ? "" : total);
    if (end !== null && total !== null && end > total) end = null; // a new, shorter file
    if (end !== null && total !== null) {
      // an older page: its own rows out of the answer's
      const lastHeld = total - at;
      const firstHeld = lastHeld - rows.length + 1;
      const from = Math.max(1, end - LIMIT + 1);
      if (from < firstHeld || end > lastHeld) return; // not all in it: stay put, ask again
      rows = rows.slice(from - firstHeld, end - firstHeld + 1);
      at = total - end;
    }
    const head = el.table.querySelector("thead tr");
    const body = el.table.querySelector("tbody");
    head.replaceChildren(...(data.columns || []).map((c) => html("th", "", c)));
    body.replaceChildren(
      ...rows
        .slice()
        .reverse()
        .map((row) => {
          // newest first
          const tr = html("tr");
          row.forEach((v) => {
            tr.appendChild(cell(v));
          });
          return tr;
        }),
    );
    const last = total !== null ? total - at : null;
    const first = last !== null ? last - rows.length + 1 : null;
    el.range.textContent = !rows.length
      ? ""
      : first !== null
        ? "episodes " +
          formatCount(first) +
          "–" +
          formatCount(last) +
          " of " +
          formatCount(total) +
          ", newest first"
        : "the newest " +
          formatCount(rows.length) +
          (at ? " after skipping " + formatCount(at) : "") +
          ", newest first";
    el.table.setAttribute("data-offset", at);
    el.newer.disabled = el.newest.disabled = end === null && !offset;
    el.older.disabled =
      !paged || (first !== null ? first <= 1 : rows.length < (data.limit || LIMIT));
  }

  function page(step) {
    // +1: older, -1: newer, 0: the newest
    if (!step) {
      end = null;
      offset = 0;
    } else if (finite(known)) {
      // by where the page ends; the newest (live) page once it reaches it
      const next = (end === null ? known : end) - step * LIMIT;
      end = next > known - LIMIT ? null : Math.max(next, 1);
    } else {
      offset = Math.max(0, offset + step * LIMIT);
    }
    onPage();
  }
  el.older.addEventListener("click", () => {
    page(1);
  });
  el.newer.addEventListener("click", () => {
    page(-1);
  });
  el.newest.addEventListener("click", () => {
    page(0);
  });

  function reset() {
    end = null;
    known = null;
    offset = 0;
  }

  return { params: params, render: render, reset: reset };
}
