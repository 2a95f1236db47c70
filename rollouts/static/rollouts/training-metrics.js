// Relax Rollout Viewer: the Training page's numbers: the convergence reading (reading.js), a
// card per metric (latest, change, sparkline, abnormal highlight) and the curve of the chosen
// metric against timesteps (chart.js: crosshair read-out, smoothing, and the metric
// dictionary's reference lines such as approx_kl = 0.05). Also the number formats the page
// shares (rvTraining.fmt, rvTraining.fmtDelta, rvTraining.duration).
//
//   var metrics = rvTraining.metrics();       // finds its elements by id
//   metrics.setSchema(schema.metrics);        // labels, units, directions, reference lines
//   metrics.update(points, cards, reading);   // points: [{timesteps, metrics: {key: value}}]
//   rvTraining.episodes(table, counter, {columns, rows});
(function () {
  "use strict";

  var SMOOTHING_KEY = "rv-training-smoothing";
  var CHOICE_KEY = "rv-training-curve";
  var EPISODES_SHOWN = 200; // the newest rows of the episode table
  var html = window.rv.element; // shared.js
  var finite = window.rv.finite;
  function byId(id) { return document.getElementById(id); }

  // As the trends page prints numbers: ints plain, floats to 4 decimals (exponent form when
  // tiny or huge).
  function fmt(value) {
    if (!finite(value)) return "–";
    if (Number.isInteger(value)) return String(value);
    var size = Math.abs(value);
    if (size < 1e-3 || size >= 1e6) return value.toExponential(3).replace(/e([+-])(\d)$/, "e$10$2");
    return value.toFixed(4);
  }
  function fmtDelta(delta) {
    if (!finite(delta)) return "–";
    return (delta > 0 ? "+" : delta < 0 ? "-" : "±") + fmt(Math.abs(delta));
  }

  // Seconds as people read them: 12.3 s, 4m 05s, 1h 02m 03s.
  function duration(seconds) {
    if (!finite(seconds)) return "–";
    if (seconds < 60) return seconds.toFixed(1) + " s";
    var s = Math.round(seconds), h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60);
    var pad = function (n) { return (n < 10 ? "0" : "") + n; };
    return (h ? h + "h " + pad(m) + "m " : m + "m ") + pad(s % 60) + "s";
  }
  function create() {
    var dictionary = {}; // key -> {key, label, unit, direction, reference}
    var order = []; // the dictionary's keys, in its order
    var points = [], keys = [], choice = null, smoothing = 0.6, optionsKey = "";
    var chart = window.rvChart.create(byId("rv-trend-chart"), {
      tooltip: byId("rv-crosshair-values"), legend: byId("rv-legend"), format: function (v, key) {
        return fmt(v) + unitOf(key);
      }, xLabel: "timesteps",
    });

    function unitOf(key) {
      var unit = dictionary[key] && dictionary[key].unit;
      return unit ? " " + unit : "";
    }
    function labelOf(key) {
      return (dictionary[key] && dictionary[key].label) || key;
    }

    function setSchema(metrics) {
      dictionary = {};
      order = (metrics || []).map(function (m) { dictionary[m.key] = m; return m.key; });
      optionsKey = "";
    }

    // The keys with points: the dictionary's first (in its order), then the others as seen.
    function knownKeys(listed) {
      var seen = {};
      (listed || []).forEach(function (k) { seen[k] = 1; });
      points.forEach(function (p) { Object.keys(p.metrics || {}).forEach(function (k) { seen[k] = 1; }); });
      return order.filter(function (k) { return seen[k]; })
        .concat(Object.keys(seen).filter(function (k) { return !dictionary[k]; }));
    }
    function effectiveChoice() {
      if (choice && keys.indexOf(choice) >= 0) return choice;
      return keys.length ? keys[0] : null;
    }

    function renderOptions() {
      var select = byId("rv-series"), joined = keys.join("\n");
      if (joined !== optionsKey) { // rebuilt only when the keys change: an open list stays
        optionsKey = joined;
        select.replaceChildren.apply(select, keys.map(function (k) {
          return new Option(labelOf(k) + (labelOf(k) === k ? "" : " (" + k + ")"), k);
        }));
      }
      select.value = effectiveChoice() || "";
    }

    function renderChart() {
      var key = effectiveChoice(), svg = byId("rv-trend-chart");
      byId("rv-curve-empty").hidden = points.length > 0;
      svg.setAttribute("data-series", key || "");
      var xs = points.map(function (p) { return { step: p.timesteps }; });
      var lines = key ? [{ key: key, label: labelOf(key), values: points.map(function (p) {
        return (p.metrics || {})[key];
      }) }] : [];
      var references = key && dictionary[key] ? dictionary[key].reference || [] : [];
      chart.draw(points.length ? xs : [], lines, smoothing, references);
    }

    function renderCards(cards) {
      var box = byId("rv-cards");
      box.replaceChildren.apply(box, (cards || []).map(function (card) {
        var node = html("section", "rv-card rv-metric-card" + (card.abnormal ? " rv-abnormal" : ""));
        node.setAttribute("data-key", card.key);
        node.appendChild(html("h2", "rv-card-title", card.label || labelOf(card.key)));
        node.appendChild(html("p", "rv-big rv-card-latest", fmt(card.latest) +
          (card.unit ? " " + card.unit : ""))).setAttribute("data-value", card.latest);
        var delta = node.appendChild(html("p", "rv-card-delta", fmtDelta(card.delta)));
        var direction = (dictionary[card.key] || {}).direction || 0;
        var good = finite(card.delta) ? card.delta * direction : 0;
        if (good) delta.classList.add(good > 0 ? "rv-delta-good" : "rv-delta-bad");
        delta.appendChild(html("span", "rv-meta", finite(card.delta) ? " since the previous point"
          : " first point"));
        var spark = (card.spark || []).map(function (s) { return finite(s) ? s : s && s.value; })
          .filter(finite);
        if (spark.length) node.appendChild(window.rvChart.sparkline(spark));
        if (card.abnormal) node.appendChild(html("p", "rv-card-why", card.why || "abnormal change"));
        node.addEventListener("click", function () { choose(card.key); });
        return node;
      }));
    }

    function renderReading(reading) {
      var box = byId("rv-reading");
      if (!reading) return;
      window.rvReading.render(box, reading, fmt, fmtDelta);
    }

    function update(newPoints, cards, reading, listedKeys) {
      points = newPoints;
      keys = knownKeys(listedKeys);
      renderReading(reading);
      renderCards(cards);
      renderOptions();
      renderChart();
    }

    function choose(key) {
      choice = key;
      window.rv.storage.store(CHOICE_KEY, key);
      renderOptions();
      renderChart();
    }

    choice = window.rv.storage.load(CHOICE_KEY, null);
    byId("rv-series").addEventListener("change", function (event) { choose(event.target.value); });
    var slider = byId("rv-smoothing");
    var stored = window.rv.storage.load(SMOOTHING_KEY, NaN);
    if (stored >= 0 && stored <= 0.99) slider.value = stored;
    function setSmoothing() {
      smoothing = parseFloat(slider.value);
      byId("rv-smoothing-value").textContent = smoothing.toFixed(2);
      renderChart();
    }
    slider.addEventListener("input", function () {
      window.rv.storage.store(SMOOTHING_KEY, parseFloat(slider.value));
      setSmoothing();
    });
    smoothing = parseFloat(slider.value);
    byId("rv-smoothing-value").textContent = smoothing.toFixed(2);

    return { setSchema: setSchema, update: update, choose: choose };
  }

  // The episode table (the run's episode CSV): the newest EPISODES_SHOWN rows, newest first.
  function episodes(table, counter, data) {
    data = data || {};
    var rows = data.rows || [];
    var head = table.querySelector("thead tr"), body = table.querySelector("tbody");
    head.replaceChildren.apply(head, (data.columns || []).map(function (c) {
      return html("th", "", c);
    }));
    var shown = rows.slice(-EPISODES_SHOWN).reverse(); // newest first
    body.replaceChildren.apply(body, shown.map(function (row) {
      var tr = html("tr");
      row.forEach(function (v) { tr.appendChild(html("td", "", finite(v) ? fmt(v) : String(v))); });
      return tr;
    }));
    counter.textContent = (rows.length > shown.length ? rows.length + " episodes, the newest " +
      shown.length + " shown" : rows.length + " episodes");
  }

  window.rvTraining = window.rvTraining || {};
  window.rvTraining.metrics = create;
  window.rvTraining.episodes = episodes;
  window.rvTraining.fmt = fmt;
  window.rvTraining.fmtDelta = fmtDelta;
  window.rvTraining.duration = duration;
})();
