// Relax Rollout Viewer: keyboard rows on a step's table (#rv-sample-table).
//   ↑ / ↓ or k / j   the previous / next row (its link takes the focus)
//   Enter            the focused row's sample (the link's own action: works without this file)
//   ← / →            the previous / next page of rows (data-prev-url / data-next-url)
// The focus rests on each row's link, so Enter, the focus ring and screen readers all follow
// it; the row also gets `rv-row-focus` for its background. Every URL comes from the page.
// The controls (filters, the column chooser) apply on change; their query is written the way
// the server writes its links (`tableQuery`): `cols` once, comma-separated, left out at its
// default, empty filters left out. Without this file the form submits as it is.
import { isTyping } from "./lib/keyboard.js";

const MOVES = { ArrowDown: 1, j: 1, ArrowUp: -1, k: -1 };
const PAGES = { ArrowLeft: "prevUrl", ArrowRight: "nextUrl" };

function table() {
  return document.getElementById("rv-sample-table");
}

function rows() {
  const t = table();
  return t ? Array.prototype.slice.call(t.querySelectorAll("tbody tr.rv-table-row")) : [];
}

function focusRow(row) {
  rows().forEach((r) => {
    r.classList.toggle("rv-row-focus", r === row);
  });
  const link = row.querySelector(".rv-row-link");
  if (link) link.focus();
  row.scrollIntoView({ block: "nearest" });
}

function currentRow() {
  const active = document.activeElement;
  const row = active?.closest ? active.closest("tr.rv-table-row") : null;
  return row || (table() ? table().querySelector("tr.rv-row-focus") : null);
}

function onKeydown(event) {
  if (event.ctrlKey || event.altKey || event.metaKey || event.shiftKey || event.defaultPrevented)
    return;
  if (isTyping(document.activeElement) || !table()) return;
  const all = rows();
  if (MOVES[event.key] && all.length) {
    event.preventDefault();
    const row = currentRow();
    const at = row
      ? all.indexOf(row) + MOVES[event.key]
      : MOVES[event.key] > 0
        ? 0
        : all.length - 1;
    focusRow(all[Math.min(Math.max(at, 0), all.length - 1)]);
    return;
  }
  if (event.key === "Enter") {
    const focused = currentRow();
    // On the row's link the browser follows it already; elsewhere in the row, open it here.
    if (focused && !document.activeElement?.closest("a[href]")) {
      event.preventDefault();
      window.location.assign(focused.getAttribute("data-url"));
    }
    return;
  }
  const which = PAGES[event.key];
  const url = which && table().dataset[which];
  if (url) {
    event.preventDefault();
    window.location.assign(url);
  }
}

function onClick(event) {
  const target = event.target;
  if (!(target instanceof Element) || target.closest("a[href]")) return;
  const row = target.closest("tr.rv-table-row");
  if (row) focusRow(row);
}

const NO_COLUMNS = "none";
const FORMS = ["rv-table-controls", "rv-col-form"];

// The query of the controls' form: its [name, value] pairs, with every `cols` value joined into
// one (in order, "none" markers dropped), that left out when it is `defaultCols`, and empty values
// left out. The server reads the plain form's query the same (repeated `cols`, a "none" marker).
export function tableQuery(entries, defaultCols) {
  const params = new URLSearchParams();
  const cols = [];
  let sawCols = false;
  for (const [name, value] of entries) {
    if (name === "cols") {
      sawCols = true;
      if (value && value !== NO_COLUMNS) cols.push(value);
    } else if (value !== "") {
      params.append(name, value);
    }
  }
  const joined = cols.join(",");
  if (sawCols && joined !== defaultCols) params.set("cols", joined || NO_COLUMNS);
  const query = params.toString();
  return query ? `?${query}` : "";
}

function onSubmit(event) {
  const form = event.target;
  if (!(form instanceof HTMLFormElement) || !FORMS.includes(form.id)) return;
  event.preventDefault();
  const list = form.querySelector("[data-default-cols]");
  const defaults = list ? list.getAttribute("data-default-cols") : "";
  const action = form.getAttribute("action") || window.location.pathname;
  window.location.assign(action + tableQuery(new FormData(form).entries(), defaults));
}

function onChange(event) {
  const target = event.target;
  if (!(target instanceof Element)) return;
  const form = target.closest("#rv-table-controls, #rv-col-form");
  if (form) form.requestSubmit();
}

export function startTable() {
  document.addEventListener("keydown", onKeydown);
  // A row clicked anywhere (not only its link) takes the focus; a click on a link still opens.
  document.addEventListener("click", onClick);
  // A filter applies as soon as it is chosen (the Apply button is for pages without script).
  document.addEventListener("change", onChange);
  document.addEventListener("submit", onSubmit);
  // Back from a sample (or ?at=): its row is marked; give it the focus, ready for ↑/↓.
  const marked = table()?.querySelector("tr.rv-row-at");
  if (marked) focusRow(marked);
}
