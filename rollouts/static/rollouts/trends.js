// Relax Rollout Viewer: the trends page of a bucket. Draws the per-step curves (chart.js, with
// chart-extras.js's tooltip and marks; what to draw: trends-lines.js), the grid of every curve
// (trends-grid.js), other runs overlaid (trends-runs.js), the metric cards and the convergence
// reading from the trends JSON (<main>'s data-trends-url), kept current from live.js's
// "rv:poll" events: it never asks the poll endpoint itself. TensorBoard scalars: trends-scalars.js.
// Text from the data reaches the page only through textContent, and nothing sets an inline
// style (the CSP forbids it): looks are CSS classes in trends.css.
(function () {
  "use strict";

  var INDEX_RELOAD_MS = 700; // at most, between reloads while the server is still indexing
  var SMOOTHING_KEY = "rv-trends-smoothing";
  var L = window.rvTrendsLines, S = window.rvTrendsScalars;
  var SHARES = { truncation_rate: 1, zero_signal_share: 1, success_share: 1 };

  var main, chart; // <main>, and the rvChart drawing into #rv-trend-chart
  var pollMs = 3000; // the server's poll interval: init() reads it
  var state = {
    points: [], series: [], data: null, done: false, cursor: null, busy: false, timer: null,
    choice: null, smoothing: 0, optionsKey: "", smoothingChosen: false, keys: {},
  };

  // -- small helpers ---------------------------------------------------------------------
  function byId(id) { return document.getElementById(id); }
  var html = window.rv.element; // shared.js
  var finite = window.rv.finite;
  // An overlaid run's line key ("reward_mean@run") names its series and run (state.keys).
  function baseKey(key) { return state.keys[key] ? state.keys[key].series : key; }
  function isShare(key) { key = baseKey(key); return SHARES[key] === 1 || key.indexOf("status.") === 0; }
  // As the server prints numbers: ints plain, floats to 4 decimals (exponent form when tiny or
  // huge); shares as a percentage.
  function fmt(value, key) {
    if (!finite(value)) return "–";
    if (key && isShare(key)) return (100 * value).toFixed(1) + " %";
    if (Number.isInteger(value)) return String(value);
    var size = Math.abs(value);
    if (size < 1e-3 || size >= 1e6) return value.toExponential(3).replace(/e([+-])(\d)$/, "e$10$2");
    return value.toFixed(4);
  }
  function fmtDelta(delta, key) {
    if (!finite(delta)) return "–";
    var sign = delta > 0 ? "+" : delta < 0 ? "-" : "±";
    if (key && isShare(key)) return sign + (100 * Math.abs(delta)).toFixed(1) + " pp";
    return sign + fmt(Math.abs(delta));
  }
  function stepUrl(point, key) {
    var run = state.keys[key] && state.keys[key].run, template = state.data.step_url;
    if (run && !run.current && run.stepUrl) template = run.stepUrl;
    return template.split("{step}").join(encodeURIComponent(point.name));
  }

  // -- fetching ------------------------------------------------------------------------
  // GET a JSON URL; on failure say so and try again later (a restarting server comes back).
  function request(url, use, retry) {
    clearTimeout(state.timer); // one load at a time: a pending reload or retry is this one now
    state.busy = true;
    fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (r) {
        return r.json().catch(function () { return {}; }).then(function (body) {
          if (!r.ok) throw new Error(body.message || "the server answered " + r.status);
          return body;
        });
      })
      .then(function (body) {
        state.busy = false;
        byId("rv-trends-error").hidden = true;
        use(body);
      }, function (error) {
        state.busy = false;
        var box = byId("rv-trends-error");
        box.textContent = "Could not load the trends: " + error.message + ". Retrying.";
        box.hidden = false;
        schedule(retry, pollMs);
      });
  }
  function schedule(fn, ms) {
    clearTimeout(state.timer);
    state.timer = setTimeout(fn, ms);
  }

  // The whole bucket, or (incremental) only from the second-to-last known step on: the last
  // one may have grown, and a point with the same step replaces the old one. `pollCursor`: the
  // poll answer that asked for this load, whose cursor the page has now caught up with.
  function loadTrends(incremental, pollCursor) {
    var url = new URL(main.dataset.trendsUrl, window.location.href);
    var known = state.points.length;
    var after = incremental && known >= 2 ? state.points[known - 2].step : -1;
    if (after >= 0) url.searchParams.set("after", after);
    request(url, function (data) { take(data, pollCursor); },
      function () { loadTrends(incremental, pollCursor); });
  }
  function take(data, pollCursor) {
    var kept = state.points.filter(function (p) { return p.step <= data.after; });
    state.points = (data.after >= 0 ? kept : []).concat(data.points);
    state.data = data;
    state.series = data.series;
    state.done = data.done;
    if (data.done) state.cursor = pollCursor || data.cursor;
    render();
    // Still indexing: read again soon. Done: live.js's polls say when a step appears or grows.
    if (data.done) return;
    schedule(function () { loadTrends(false); }, Math.min(INDEX_RELOAD_MS, pollMs));
  }
  // The page comes with the server's first answer (what memory and the disk cache hold), so
  // the curves are drawn before any request; without it, ask.
  function loadInline() {
    var inline = byId("rv-trends-data");
    try { take(JSON.parse(inline.textContent), null); } catch (e) { loadTrends(false); }
  }

  // A poll answer (live.js): its cursor is the bucket's newest step and that step's size.
  // Another cursor than the one these curves were read at means a step appeared or grew (or
  // went): read from there on. Compared with the page's own cursor, not the header's, so an
  // answer that came while a load was under way is caught up with on the next one.
  function onPoll(event) {
    var cursor = event.detail && event.detail.cursor;
    if (!state.done || state.busy || sameCursor(cursor, state.cursor)) return;
    loadTrends(true, cursor);
  }
  function sameCursor(a, b) {
    if (!a || !b) return !a && !b;
    return a.after === b.after && a.size === b.size && (a.scalars || 0) === (b.scalars || 0);
  }

  // -- page parts ------------------------------------------------------------------------
  function render() {
    var data = state.data, empty = state.points.length === 0;
    var progress = byId("rv-trends-progress"), bar = progress.querySelector("progress");
    progress.hidden = data.done;
    progress.setAttribute("data-done", String(data.done));
    progress.querySelector(".rv-progress-text").textContent =
      "Indexed " + data.indexed + " / " + data.total + " steps";
    bar.max = Math.max(data.total, 1);
    bar.value = data.indexed;
    renderFailed(data.failed);
    var message = byId("rv-trends-empty");
    message.hidden = !empty;
    message.textContent = data.total === 0 || data.done
      ? "Waiting for the first step: the curves appear as soon as the run writes one."
      : "Reading the steps: the curves appear as they are indexed.";
    main.querySelector(".rv-trend-card").hidden = empty;
    byId("rv-reading").hidden = false;
    window.rvReading.render(byId("rv-reading"), data.reading, fmt, fmtDelta);
    renderCards(data.cards);
    renderOptions();
    if (!empty) renderChart();
  }

  function renderFailed(failed) {
    var box = byId("rv-trends-failed"), list = box.querySelector(".rv-failed-list");
    box.hidden = !failed.length;
    box.querySelector(".rv-failed-title").textContent =
      failed.length + " step file(s) could not be read:";
    list.replaceChildren.apply(list, failed.map(function (f) {
      return html("li", "", f.name + ": " + f.error);
    }));
  }

  function renderCards(cards) {
    var box = byId("rv-cards");
    box.replaceChildren.apply(box, cards.map(function (card) {
      var node = html("section", "rv-card rv-metric-card" + (card.abnormal ? " rv-abnormal" : ""));
      node.setAttribute("data-key", card.key);
      node.appendChild(html("h2", "rv-card-title", card.label));
      node.appendChild(html("p", "rv-big rv-card-latest", fmt(card.latest, card.key)))
        .setAttribute("data-value", card.latest);
      var delta = node.appendChild(html("p", "rv-card-delta", fmtDelta(card.delta, card.key)));
      // Red only when the change is bad by the card's own direction; a neutral metric's
      // unusual change is flagged, not painted as bad.
      var direction = "direction" in card ? card.direction
        : (available(card.key)[0] || { direction: 0 }).direction;
      var good = finite(card.delta) ? card.delta * direction : 0;
      if (good) delta.classList.add(good > 0 ? "rv-delta-good" : "rv-delta-bad");
      node.setAttribute("data-direction", direction);
      if (card.abnormal && !direction) node.classList.add("rv-abnormal-neutral");
      var spark = card.spark;
      delta.appendChild(html("span", "rv-meta", card.delta === null ? " first step"
        : " since step " + spark[spark.length - 2].step));
      node.appendChild(window.rvChart.sparkline(spark.map(function (s) { return s.value; })));
      var flag = finite(card.threshold)
        ? "; a change beyond ±" + fmtDelta(card.threshold, card.key).slice(1) + " is flagged" : "";
      node.appendChild(html("p", "rv-note", "step " + card.step + flag));
      if (card.abnormal) node.appendChild(html("p", "rv-card-why", card.why));
      return node;
    }));
  }

  // -- the curve selector: one metric, or every series of a kind ("all:status") ----------
  function available(choice) {
    var kind = choice && choice.indexOf("all:") === 0 ? choice.slice(4) : null;
    return state.series.filter(function (s) { return kind ? s.kind === kind : s.key === choice; });
  }
  function effectiveChoice() {
    if (available(state.choice).length) return state.choice;
    if (available("reward_mean").length) return "reward_mean";
    return state.series.length ? state.series[0].key : null;
  }

  function renderOptions() {
    var select = byId("rv-series");
    var key = state.series.map(function (s) { return s.key; }).join("\n");
    if (key !== state.optionsKey) { // rebuilt only when the series change: an open list stays
      state.optionsKey = key;
      var groups = { metric: optgroup("Metrics") };
      state.series.forEach(function (s) {
        var name = L.groupName(s.kind), group = groups[s.kind];
        if (!group) { // every status (dataset, component) together first, then each alone
          group = groups[s.kind] = optgroup(name);
          group.append.apply(group, L.allOptions(s.kind)); // none for scalars: one by one
        }
        group.appendChild(new Option(s.label, s.key));
      });
      select.replaceChildren.apply(select, Object.keys(groups).map(function (kind) {
        return groups[kind];
      }).filter(function (g) { return g.children.length; }));
    }
    select.value = effectiveChoice() || "";
    S.render(state.data.scalars, state.series, effectiveChoice(), available, optgroup);
  }
  function optgroup(label) {
    var node = html("optgroup");
    node.label = label;
    return node;
  }

  // -- the chart: rvChart (chart.js) draws the chosen curves -------------------------------
  // One run: the chosen series. Other runs checked: the chosen series once per run, by step.
  function renderChart() {
    var choice = effectiveChoice(), chosen = available(choice), target = byId("rv-trend-chart");
    chosen = S.addWith(chosen, choice, available, target); // the "with" curve, if any
    var overlay = window.rvTrendsRuns.overlay({ points: state.points, stepUrl: state.data.step_url });
    target.setAttribute("data-series", choice || "");
    target.setAttribute("data-runs", overlay ? overlay.runs.length : 1);
    state.keys = {};
    if (!state.smoothingChosen) setSmoothing(L.defaultSmoothing(state.points.length), true);
    if (overlay) chart.draw(overlay.points, L.overlayLines(chosen, overlay, state.keys), state.smoothing);
    else chart.draw(state.points, L.lines(chosen, state.points), state.smoothing);
    window.rvTrendsGrid.render(byId("rv-trend-grid"), state.points, L.panels(state.series, state.points),
      { format: fmt, selected: choice, pick: pick });
  }
  function choose(choice) {
    state.choice = choice;
    byId("rv-series").value = choice;
    var url = new URL(window.location.href);
    url.searchParams.set("series", state.choice);
    history.replaceState(history.state, "", url); // a reload or a shared link keeps the curve
    if (state.points.length) renderChart();
  }
  function pick(choice) { // a small chart of the grid: drawn large in the main chart
    choose(choice);
    byId("rv-trend-chart").scrollIntoView({ block: "nearest" });
  }
  // The slider: the user's choice (remembered), else the default for this many points.
  function setSmoothing(value, auto) {
    var slider = byId("rv-smoothing");
    slider.value = value;
    state.smoothing = parseFloat(slider.value);
    byId("rv-smoothing-value").textContent = state.smoothing.toFixed(2);
    var note = byId("rv-smoothing-note");
    note.hidden = !auto;
    note.textContent = "default for " + state.points.length + " points";
  }

  function setupControls() {
    state.choice = new URLSearchParams(window.location.search).get("series") || "reward_mean";
    byId("rv-series").addEventListener("change", function (event) { choose(event.target.value); });
    S.initWith(byId("rv-series-with"), function () { if (state.points.length) renderChart(); });
    var slider = byId("rv-smoothing");
    var stored = window.rv.storage.load(SMOOTHING_KEY, NaN);
    state.smoothingChosen = stored >= 0 && stored <= 0.99;
    setSmoothing(state.smoothingChosen ? stored : 0, !state.smoothingChosen);
    slider.addEventListener("input", function () {
      window.rv.storage.store(SMOOTHING_KEY, parseFloat(slider.value));
      state.smoothingChosen = true;
      setSmoothing(slider.value, false);
      if (state.points.length) renderChart();
    });
  }

  function init() {
    main = byId("rv-main");
    if (!main || !main.dataset.trendsUrl) return;
    if (window.rv) pollMs = window.rv.pollMs();
    var extras = window.rvChartExtras;
    function word(line) { return L.wordOf(available(baseKey(line.key))[0] || { direction: 0 }); }
    function gapReason(point, key) { return L.gapOf(point, key, state.keys); }
    chart = window.rvChart.create(byId("rv-trend-chart"), {
      tooltip: byId("rv-crosshair-values"), legend: byId("rv-legend"), href: stepUrl,
      format: fmt, percent: isShare, gapReason: gapReason, place: extras.place,
      decorate: extras.decorator({ format: fmt, word: word, gapReason: gapReason }),
    });
    setupControls();
    window.rvTrendsRuns.init(function () { if (state.points.length) renderChart(); });
    document.addEventListener("rv:poll", onPoll);
    loadInline();
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
