// Relax Rollout Viewer: the trends page of a bucket. Draws the per-step curves (chart.js, with
// chart-extras.js's tooltip and marks; what to draw: trends-lines.js), the grid of every curve
// (trends-grid.js), other runs overlaid (trends-runs.js), the metric cards and the convergence
// reading from the trends JSON (<main>'s data-trends-url), kept current from live.js's
// "rv:poll" events: it never asks the poll endpoint itself. TensorBoard scalars: trends-scalars.js.
// Text from the data reaches the page only through textContent, and nothing sets an inline
// style (the CSP forbids it): looks are CSS classes in trends.css.
import { createChart } from "./chart.js";
import { decorator, placeTooltip } from "./chart-extras.js";
import { pageTools } from "./chart-tools.js";
import { byId, element as html } from "./lib/dom.js";
import { getJson } from "./lib/fetch.js";
import { formatDelta, formatNumber, formatShare, formatShareDelta } from "./lib/numbers.js";
import { pollMs as serverPollMs } from "./lib/poll.js";
import { load, store } from "./lib/storage.js";
import { replaceParam } from "./lib/url.js";
import { renderReading } from "./reading.js";
import { renderCards } from "./trends-cards.js";
import { renderGrid, renderRunLegend } from "./trends-grid.js";
import * as L from "./trends-lines.js";
import { initRuns, overlay as runsOverlay } from "./trends-runs.js";
import * as S from "./trends-scalars.js";

const INDEX_RELOAD_MS = 700; // at most, between reloads while the server is still indexing
const SMOOTHING_KEY = "rv-trends-smoothing";
const SHARES = { truncation_rate: 1, zero_signal_share: 1, success_share: 1 };

let main;
let chart; // <main>, and the chart (chart.js) drawing into #rv-trend-chart
let pollMs = 3000; // the server's poll interval: startTrends() reads it
const state = {
  points: [],
  series: [],
  data: null,
  done: false,
  cursor: null,
  busy: false,
  timer: null,
  choice: null,
  smoothing: 0,
  optionsKey: "",
  smoothingChosen: false,
  keys: {},
};

// -- small helpers ---------------------------------------------------------------------
// An overlaid run's line key ("reward_mean@run") names its series and run (state.keys).
function baseKey(key) {
  return state.keys[key] ? state.keys[key].series : key;
}
function isShare(key) {
  key = baseKey(key);
  return SHARES[key] === 1 || key.indexOf("status.") === 0 || L.flagOf(key) !== null;
}
// As the server prints numbers (the number rule: lib/numbers.js); shares as a percentage.
function fmt(value, key) {
  return key && isShare(key) ? formatShare(value) : formatNumber(value);
}
function fmtDelta(delta, key) {
  return key && isShare(key) ? formatShareDelta(delta) : formatDelta(delta);
}
// A point's link: the step's page, or for a flag's series its table filtered by that flag. A
// click beside the points (no line) follows the chosen curve when it is one series.
function stepUrl(point, key) {
  const run = state.keys[key]?.run;
  const urls = { step: state.data.step_url, table: state.data.table_url };
  if (run && !run.current && run.stepUrl) urls.step = run.stepUrl;
  if (run && !run.current) urls.table = run.tableUrl;
  return L.pointUrl(urls, point.name, key ? baseKey(key) : effectiveChoice());
}

// -- fetching ------------------------------------------------------------------------
// GET a JSON URL; on failure say so and try again later (a restarting server comes back).
function request(url, use, retry) {
  clearTimeout(state.timer); // one load at a time: a pending reload or retry is this one now
  state.busy = true;
  getJson(url).then(
    (body) => {
      state.busy = false;
      byId("rv-trends-error").hidden = true;
      use(body);
    },
    (error) => {
      state.busy = false;
      const box = byId("rv-trends-error");
      box.textContent = "Could not load the trends: " + error.message + ". Retrying.";
      box.hidden = false;
      schedule(retry, pollMs);
    },
  );
}
function schedule(fn, ms) {
  clearTimeout(state.timer);
  state.timer = setTimeout(fn, ms);
}

// The whole bucket, or (incremental) only from the second-to-last known step on: the last
// one may have grown, and a point with the same step replaces the old one. `pollCursor`: the
// poll answer that asked for this load, whose cursor the page has now caught up with.
function loadTrends(incremental, pollCursor) {
  const url = new URL(main.dataset.trendsUrl, window.location.href);
  const known = state.points.length;
  const after = incremental && known >= 2 ? state.points[known - 2].step : -1;
  if (after >= 0) url.searchParams.set("after", after);
  request(
    url,
    (data) => {
      take(data, pollCursor);
    },
    () => {
      loadTrends(incremental, pollCursor);
    },
  );
}
function take(data, pollCursor) {
  const kept = state.points.filter((p) => p.step <= data.after);
  state.points = (data.after >= 0 ? kept : []).concat(data.points);
  state.data = data;
  state.series = data.series;
  state.done = data.done;
  if (data.done) state.cursor = pollCursor || data.cursor;
  render();
  // Still indexing: read again soon. Done: live.js's polls say when a step appears or grows.
  if (data.done) return;
  schedule(
    () => {
      loadTrends(false);
    },
    Math.min(INDEX_RELOAD_MS, pollMs),
  );
}
// The page comes with the server's first answer (what memory and the disk cache hold), so
// the curves are drawn before any request; without it, ask.
function loadInline() {
  const inline = byId("rv-trends-data");
  try {
    take(JSON.parse(inline.textContent), null);
  } catch (_e) {
    loadTrends(false);
  }
}

// A poll answer (live.js): its cursor is the bucket's newest step and that step's size.
// Another cursor than the one these curves were read at means a step appeared or grew (or
// went): read from there on. Compared with the page's own cursor, not the header's, so an
// answer that came while a load was under way is caught up with on the next one.
function onPoll(event) {
  const cursor = event.detail?.cursor;
  if (!state.done || state.busy || sameCursor(cursor, state.cursor)) return;
  loadTrends(true, cursor);
}
function sameCursor(a, b) {
  if (!a || !b) return !a && !b;
  return a.after === b.after && a.size === b.size && (a.scalars || 0) === (b.scalars || 0);
}

// -- page parts ------------------------------------------------------------------------
function render() {
  const data = state.data;
  const empty = state.points.length === 0;
  const progress = byId("rv-trends-progress");
  const bar = progress.querySelector("progress");
  progress.hidden = data.done;
  progress.setAttribute("data-done", String(data.done));
  progress.querySelector(".rv-progress-text").textContent =
    "Indexed " + data.indexed + " / " + data.total + " steps";
  bar.max = Math.max(data.total, 1);
  bar.value = data.indexed;
  renderFailed(data.failed);
  const message = byId("rv-trends-empty");
  message.hidden = !empty;
  message.textContent =
    data.total === 0 || data.done
      ? "Waiting for the first step: the curves appear as soon as the run writes one."
      : "Reading the steps: the curves appear as they are indexed.";
  main.querySelector(".rv-trend-card").hidden = empty;
  byId("rv-reading").hidden = false;
  renderReading(byId("rv-reading"), data.reading, fmt, fmtDelta);
  renderCards(byId("rv-cards"), data.cards, {
    format: fmt,
    formatDelta: fmtDelta,
    direction: (key) => (available(key)[0] || { direction: 0 }).direction,
  });
  renderOptions();
  if (!empty) renderChart();
}

function renderFailed(failed) {
  const box = byId("rv-trends-failed");
  const list = box.querySelector(".rv-failed-list");
  box.hidden = !failed.length;
  box.querySelector(".rv-failed-title").textContent =
    failed.length + " step file(s) could not be read:";
  list.replaceChildren(...failed.map((f) => html("li", "", f.name + ": " + f.error)));
}

// -- the curve selector: one metric, or every series of a kind ("all:status") ----------
function available(choice) {
  const kind = choice && choice.indexOf("all:") === 0 ? choice.slice(4) : null;
  return state.series.filter((s) => (kind ? s.kind === kind : s.key === choice));
}
function effectiveChoice() {
  if (available(state.choice).length) return state.choice;
  if (available("reward_mean").length) return "reward_mean";
  return state.series.length ? state.series[0].key : null;
}

function renderOptions() {
  const select = byId("rv-series");
  const key = state.series.map((s) => s.key).join("\n");
  if (key !== state.optionsKey) {
    // rebuilt only when the series change: an open list stays
    state.optionsKey = key;
    const groups = { metric: optgroup("Metrics") };
    state.series.forEach((s) => {
      const name = L.groupName(s.kind);
      let group = groups[s.kind];
      if (!group) {
        // every status (dataset, component) together first, then each alone
        group = groups[s.kind] = optgroup(name);
        group.append(...L.allOptions(s.kind)); // none for scalars: one by one
      }
      group.appendChild(new Option(s.label, s.key));
    });
    select.replaceChildren(
      ...Object.keys(groups)
        .map((kind) => groups[kind])
        .filter((g) => g.children.length),
    );
  }
  select.value = effectiveChoice() || "";
  S.renderScalars(state.data.scalars, state.series, effectiveChoice(), available, optgroup);
}
function optgroup(label) {
  const node = html("optgroup");
  node.label = label;
  return node;
}

// -- the chart: chart.js draws the chosen curves -------------------------------
// One run: the chosen series. Other runs checked: the chosen series once per run, by step.
function renderChart() {
  const choice = effectiveChoice();
  let chosen = available(choice);
  const target = byId("rv-trend-chart");
  chosen = S.addWith(chosen, choice, available, target); // the "with" curve, if any
  const overlay = runsOverlay({ points: state.points, stepUrl: state.data.step_url });
  target.setAttribute("data-series", choice || "");
  target.setAttribute("data-runs", overlay ? overlay.runs.length : 1);
  state.keys = {};
  if (!state.smoothingChosen) setSmoothing(L.defaultSmoothing(state.points.length), true);
  const drawn = overlay
    ? L.overlayLines(chosen, overlay, state.keys)
    : L.lines(chosen, state.points);
  // The reading's thresholds (the trends JSON's `references`) on the curves they judge.
  const refs = (state.data.references || []).filter((r) =>
    drawn.some((l) => baseKey(l.key) === r.key),
  );
  chart.draw(overlay ? overlay.points : state.points, drawn, state.smoothing, refs);
  renderGrid(
    byId("rv-trend-grid"),
    overlay ? overlay.points : state.points,
    L.panels(state.series, state.points, overlay),
    { format: fmt, selected: choice, pick: pick },
  );
  renderRunLegend(byId("rv-grid-legend"), L.legendRuns(overlay));
}
function choose(choice) {
  state.choice = choice;
  byId("rv-series").value = choice;
  replaceParam("series", state.choice); // a reload or a shared link keeps the curve
  if (state.points.length) renderChart();
}
function pick(choice) {
  // a small chart of the grid: drawn large in the main chart
  choose(choice);
  byId("rv-trend-chart").scrollIntoView({ block: "nearest" });
}
// The slider: the user's choice (remembered), else the default for this many points.
function setSmoothing(value, auto) {
  const slider = byId("rv-smoothing");
  slider.value = value;
  state.smoothing = parseFloat(slider.value);
  byId("rv-smoothing-value").textContent = state.smoothing.toFixed(2);
  const note = byId("rv-smoothing-note");
  note.hidden = !auto;
  note.textContent = "default for " + state.points.length + " points";
}

function setupControls() {
  state.choice = new URLSearchParams(window.location.search).get("series") || "reward_mean";
  byId("rv-series").addEventListener("change", (event) => {
    choose(event.target.value);
  });
  S.initWith(byId("rv-series-with"), () => {
    if (state.points.length) renderChart();
  });
  const slider = byId("rv-smoothing");
  const stored = load(SMOOTHING_KEY, NaN);
  state.smoothingChosen = stored >= 0 && stored <= 0.99;
  setSmoothing(state.smoothingChosen ? stored : 0, !state.smoothingChosen);
  slider.addEventListener("input", () => {
    store(SMOOTHING_KEY, parseFloat(slider.value));
    state.smoothingChosen = true;
    setSmoothing(slider.value, false);
    if (state.points.length) renderChart();
  });
}

export function startTrends() {
  main = byId("rv-main");
  if (!main?.dataset.trendsUrl) return;
  pollMs = serverPollMs();
  function word(line) {
    return L.wordOf(available(baseKey(line.key))[0] || { direction: 0 });
  }
  function gapReason(point, key) {
    return L.gapOf(point, key, state.keys);
  }
  chart = createChart(byId("rv-trend-chart"), {
    tooltip: byId("rv-crosshair-values"),
    legend: byId("rv-legend"),
    href: stepUrl,
    format: fmt,
    percent: isShare,
    gapReason: gapReason,
    place: placeTooltip,
    decorate: decorator({ format: fmt, word: word, gapReason: gapReason }),
    tools: pageTools(() => "trends-" + state.data.subdir + "-" + (effectiveChoice() || ""), true),
  });
  setupControls();
  initRuns(() => {
    if (state.points.length) renderChart();
  });
  document.addEventListener("rv:poll", onPoll);
  loadInline();
}
