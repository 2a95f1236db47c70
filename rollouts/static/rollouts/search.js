// Relax Rollout Viewer: the search page of a bucket. The server renders the first slice of the
// search; this script asks the JSON (<main>'s data-search-url, with the cursor) for the next
// slices until the search is done, filling in the hits, the per-step table and the curve of the
// share of matching samples per step (chart.js). Leaving the page aborts the request in flight.
// A click on a step of the curve (or Enter on it) lists that step's hits (#step=N in the URL).
// Sample text reaches the page only through textContent: the match is its own <mark> element.
import { createChart } from "./chart.js";
import { byId, element as html } from "./lib/dom.js";
import { getJson as requestJsonBody } from "./lib/fetch.js";
import { formatCount, formatShare } from "./lib/numbers.js";
import { stepFromHash, withParams as withQuery } from "./lib/url.js";

let main;
let chart;
let searchUrl;
let pending = []; // the AbortControllers of the requests in flight
const perStep = {}; // step -> {step, samples, matches}, summed over the slices
const stepHits = {}; // step -> the hits fetched for that step alone (when the list lacks some)

function withParams(url, params) {
  return withQuery(url, params, window.location.href);
}

// Every request can be aborted when the page goes (pagehide).
function getJson(url) {
  const controller = new AbortController();
  pending.push(controller);
  const done = () => {
    pending = pending.filter((c) => c !== controller);
  };
  return requestJsonBody(url, { signal: controller.signal }).then(
    (body) => {
      done();
      return body;
    },
    (error) => {
      done();
      throw error;
    },
  );
}

// -- rendering -----------------------------------------------------------------------
function hitItem(hit) {
  const item = html("li", "rv-hit");
  item.setAttribute("data-step", hit.step);
  const link = item.appendChild(html("a", "rv-hit-link"));
  link.href = hit.url;
  link.appendChild(
    html(
      "span",
      "rv-hit-where",
      "step " + hit.step + " \u00b7 sample " + hit.position + " \u00b7 " + hit.field,
    ),
  );
  link.append(" ");
  link.appendChild(hitChips(hit));
  link.append(" ");
  const snippet = link.appendChild(html("span", "rv-snippet"));
  snippet.append(hit.snippet.before);
  snippet.appendChild(html("mark", "rv-search-mark", hit.snippet.match));
  snippet.append(hit.snippet.after);
  return item;
}

// The hit's reward and status chips as the server toned them, and its answer check.
function hitChips(hit) {
  const chips = html("span", "rv-chips rv-hit-chips");
  (hit.chips || []).forEach((chip) => {
    const item = chips.appendChild(html("span", "rv-chip " + chip.class));
    item.setAttribute("data-field", chip.name);
    item.setAttribute("data-tone", chip.tone);
    item.appendChild(html("span", "rv-chip-name", chip.name));
    item.append(" " + chip.display);
  });
  if (hit.match === true || hit.match === false) {
    const check = chips.appendChild(
      html(
        "span",
        "rv-chip rv-hit-match " + (hit.match ? "rv-tone-right" : "rv-tone-wrong"),
        (hit.match ? "\u2713" : "\u2717") + " answer",
      ),
    );
    check.setAttribute("data-match", hit.match ? "yes" : "no");
    check.title = "the response's final answer against the label";
  }
  return chips;
}

// "12 of 1,665 matches shown", and whether the count is still going.
function showTotal(matches, done) {
  const total = byId("rv-hits-total");
  if (!total) return;
  if (matches !== undefined) total.setAttribute("data-matches", String(matches));
  const count = Number(total.getAttribute("data-matches"));
  byId("rv-hits-count").textContent = formatCount(
    byId("rv-hits").querySelectorAll(".rv-hit").length,
  );
  byId("rv-matches-count").textContent = formatCount(count);
  byId("rv-matches-noun").textContent = count === 1 ? "match" : "matches";
  if (done !== undefined)
    byId("rv-matches-state").textContent = done ? "" : ", still counting\u2026";
}

function addHits(hits) {
  const list = byId("rv-hits");
  const none = byId("rv-no-hits");
  if (none && hits.length) none.remove();
  hits.forEach((hit) => {
    list.appendChild(hitItem(hit));
  });
  showTotal();
  applyFilter();
}

function addCounts(entries) {
  entries.forEach((entry) => {
    const known = perStep[entry.step];
    if (known) known.matches += entry.matches;
    else perStep[entry.step] = { step: entry.step, samples: entry.samples, matches: entry.matches };
  });
  drawTable();
  drawCurve();
}

function steps() {
  return Object.keys(perStep)
    .map(Number)
    .sort((a, b) => a - b)
    .map((step) => perStep[step]);
}
function share(entry) {
  return entry.samples ? entry.matches / entry.samples : 0;
}

function drawTable() {
  const body = byId("rv-search-steps-table").tBodies[0];
  body.replaceChildren(
    ...steps().map((entry) => {
      const row = html("tr");
      row.setAttribute("data-step", entry.step);
      row.setAttribute("data-samples", entry.samples);
      row.setAttribute("data-matches", entry.matches);
      [entry.step, entry.samples, entry.matches, formatShare(share(entry))].forEach((v) => {
        row.appendChild(html("td", "", String(v)));
      });
      return row;
    }),
  );
}

function drawCurve() {
  if (!chart) return;
  const entries = steps();
  chart.draw(
    entries.map((e) => ({ step: e.step, name: String(e.step) })),
    [{ key: "share", label: "matching", values: entries.map(share) }],
    0,
  );
}

function progress(body) {
  const bar = byId("rv-search-bar");
  const status = byId("rv-search-status");
  bar.max = body.total_steps || 1;
  bar.value = body.done ? bar.max : body.scanned_steps;
  status.textContent = body.done
    ? "Searched all " + body.total_steps + " step" + (body.total_steps === 1 ? "" : "s")
    : "Searched " + body.scanned_steps + " of " + body.total_steps + " steps\u2026";
  byId("rv-search-progress").setAttribute("data-done", body.done ? "true" : "false");
  showTotal(body.matches, body.done);
  const none = byId("rv-no-hits");
  if (none && body.done) none.textContent = "No match.";
}

// -- continuing with the cursor --------------------------------------------------------
function continueFrom(cursor) {
  const more = byId("rv-search-more");
  if (more) more.hidden = true; // the script goes on by itself
  getJson(withParams(searchUrl, { after: cursor })).then(
    (body) => {
      addHits(body.hits);
      addCounts(body.per_step);
      progress(body);
      if (!body.done && body.cursor) continueFrom(body.cursor);
    },
    (error) => {
      if (error.name === "AbortError") return;
      byId("rv-search-status").textContent = "The search stopped: " + error.message;
      if (more) more.hidden = false;
    },
  );
}

// -- one step's hits -----------------------------------------------------------------
function chosenStep() {
  return stepFromHash(window.location.hash);
}

function applyFilter() {
  const step = chosenStep();
  const list = byId("rv-hits");
  const note = byId("rv-hits-filter");
  const all = byId("rv-hits-all");
  note.hidden = all.hidden = step === null;
  const shown = list.querySelectorAll(".rv-hit[data-step='" + step + "']").length;
  list.querySelectorAll(".rv-hit").forEach((item) => {
    item.hidden = step !== null && Number(item.getAttribute("data-step")) !== step;
  });
  if (step === null) return;
  const entry = perStep[step];
  note.textContent = "step " + step + ": " + (entry ? entry.matches : 0) + " matching";
  if (entry && entry.matches > shown && !stepHits[step]) fetchStep(step);
}

// The list holds the first hits of the whole search only: a step's other hits are asked for.
function fetchStep(step) {
  stepHits[step] = true;
  const url = withParams(searchUrl, { steps: String(step), after: null, limit: "1000" });
  (function more(from) {
    getJson(from ? withParams(url, { after: from }) : url).then(
      (body) => {
        const list = byId("rv-hits");
        const known = {};
        list.querySelectorAll(".rv-hit").forEach((item) => {
          known[item.querySelector("a").getAttribute("href")] = true;
        });
        addHits(body.hits.filter((hit) => !known[hit.url]));
        if (!body.done && body.cursor) more(body.cursor);
      },
      () => {
        stepHits[step] = false;
      },
    );
  })(null);
}

export function startSearch() {
  main = byId("rv-main");
  searchUrl = main?.getAttribute("data-search-url");
  if (!searchUrl || !byId("rv-hits")) return;
  byId("rv-search-steps-table")
    .querySelectorAll("tbody tr")
    .forEach((row) => {
      const step = Number(row.getAttribute("data-step"));
      perStep[step] = {
        step: step,
        samples: Number(row.getAttribute("data-samples")),
        matches: Number(row.getAttribute("data-matches")),
      };
    });
  chart = createChart(byId("rv-search-chart"), {
    tooltip: byId("rv-search-tip"),
    href: (point) => "#step=" + point.step,
    format: formatShare, // "–" when missing
    percent: () => true,
  });
  drawCurve();
  byId("rv-hits-all").addEventListener("click", () => {
    history.pushState(null, "", window.location.pathname + window.location.search);
    applyFilter();
  });
  window.addEventListener("hashchange", applyFilter);
  // Leaving (or the back/forward cache keeping the page): stop asking.
  window.addEventListener("pagehide", () => {
    pending.forEach((c) => {
      c.abort();
    });
  });
  applyFilter();
  const cursor = main.getAttribute("data-cursor");
  if (cursor) continueFrom(cursor);
}
