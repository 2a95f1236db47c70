// Relax Rollout Viewer: the Training page's numbers: the convergence reading (reading.js, with
// the reading's notes: one per rule, its window and numbers), a card per metric (latest,
// change, sparkline, abnormal highlight) and the curve of the chosen metric against timesteps
// (chart.js: crosshair read-out, smoothing, the metric dictionary's reference lines such as
// approx_kl = 0.05), one line per attempt of the job with each resume marked. Also the number
// formats the page shares (rvTraining.fmt, .fmtDelta, .duration, .count, .rate).
//
//   var metrics = rvTraining.metrics();       // finds its elements by id
//   metrics.setSchema(schema.metrics);        // labels, units, directions, reference lines
//   metrics.update(kept, cards, reading, keys, outcome);  // kept: rvTraining.points()
(function () {
  "use strict";

  var SMOOTHING_KEY = "rv-training-smoothing";
  var CHOICE_KEY = "rv-training-curve";
  var html = window.rv.element; // shared.js
  var finite = window.rv.finite;
  var svg = window.rvChart.svg; // chart.js
  var COUNT = new Intl.NumberFormat("en-US", { maximumFractionDigits: 0 });
  var RATE = new Intl.NumberFormat("en-US", { minimumFractionDigits: 1, maximumFractionDigits: 1 });
  function byId(id) { return document.getElementById(id); }

  // A count with thousands separators (12,345); "–" when there is none.
  function count(value) { return finite(value) ? COUNT.format(value) : "–"; }
  // A rate with one decimal and thousands separators (1,234.5).
  function rate(value) { return finite(value) ? RATE.format(value) : "–"; }

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
  // What the chart says of a resume: "resumed from <checkpoint> at <timesteps>".
  function resumeText(attempt) {
    return "resumed" + (attempt.resumed_from ? " from " + attempt.resumed_from : "") +
      (finite(attempt.start_timesteps) ? " at " + count(attempt.start_timesteps) : "");
  }

  function create() {
    var dictionary = {}; // key -> {key, label, unit, direction, reference}
    var order = []; // the dictionary's keys, in its order
    var kept = null, points = [], keys = [], choice = null, smoothing = 0.6, optionsKey = "";
    var resumes = []; // the attempts after the first: a marker each on the curve
    var ticksOf = {}; // a drawn line's key -> its attempt's points by timesteps
    var chart = window.rvChart.create(byId("rv-trend-chart"), {
      tooltip: byId("rv-crosshair-values"), legend: byId("rv-legend"), format: function (v, key) {
        return fmt(v) + unitOf(key);
      }, xLabel: "timesteps", decorate: markResumes,
      gapReason: function (point, lineKey) {
        var at = ticksOf[lineKey];
        return at && !at[point.step] ? "(not in this attempt)" : "";
      },
    });

    // A dashed vertical line where each resumed attempt starts, labelled with its checkpoint.
    function markResumes(box, scale) {
      var top = scale.y(scale.y1), middle = (scale.left + scale.right) / 2;
      resumes.forEach(function (attempt, n) {
        if (!finite(attempt.start_timesteps)) return;
        var x = Math.min(Math.max(scale.x(attempt.start_timesteps), scale.left), scale.right);
        var group = svg("g", { "class": "rv-resume", "data-attempt": attempt.index,
          "data-timesteps": attempt.start_timesteps }, box);
        svg("line", { "class": "rv-resume-line", x1: x.toFixed(2), x2: x.toFixed(2), y1: top,
          y2: scale.bottom }, group);
        var label = svg("text", { "class": "rv-resume-label", y: (top + 12 + 14 * (n % 3)).toFixed(2) },
          group);
        svg("title", {}, group).textContent = resumeText(attempt);
        placeLabel(label, x, scale, [resumeText(attempt),
          "resumed at " + count(attempt.start_timesteps)], x > middle);
      });
    }

    // The label beside its marker, on the side with room (`preferEnd`: left of it first); when
    // no side has room for the whole text, the short one (the whole is the marker's title).
    function placeLabel(label, x, scale, texts, preferEnd) {
      var sides = preferEnd ? [true, false] : [false, true];
      for (var i = 0; i < texts.length; i += 1) {
        label.textContent = texts[i];
        var width = label.getComputedTextLength();
        for (var k = 0; k < 2; k += 1) {
          var end = sides[k], at = end ? x - 4 : x + 4;
          if (end ? at - width >= scale.left : at + width <= scale.right) {
            label.setAttribute("x", at.toFixed(2));
            label.setAttribute("text-anchor", end ? "end" : "start");
            return;
          }
        }
      }
      label.setAttribute("x", (preferEnd ? x - 4 : x + 4).toFixed(2));
      label.setAttribute("text-anchor", preferEnd ? "end" : "start");
    }

    function unitOf(key) {
      key = String(key).split("@")[0]; // an attempt's line: the metric's key, then @attempt
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

    // One line per attempt (a single attempt: the metric's line, as on the trends page). Each
    // attempt's line runs on over the ticks only another attempt has.
    function renderChart() {
      var key = effectiveChoice(), box = byId("rv-trend-chart");
      byId("rv-curve-empty").hidden = points.length > 0;
      box.setAttribute("data-series", key || "");
      var series = kept ? kept.series() : { xs: [], groups: [] }, several = series.groups.length > 1;
      var attempts = kept ? kept.attempts() : [];
      var drawn = {};
      series.groups.forEach(function (g) { drawn[g.attempt] = true; });
      resumes = attempts.filter(function (a) { return a.index > 0 && drawn[a.index]; });
      box.setAttribute("data-attempts", series.groups.length);
      ticksOf = {};
      var lines = !key ? [] : series.groups.map(function (group) {
        var lineKey = several ? key + "@" + group.attempt : key;
        if (several) ticksOf[lineKey] = group.at;
        return {
          key: lineKey,
          label: labelOf(key) + (several ? " · attempt " + (group.attempt + 1) : ""),
          values: series.xs.map(function (x) {
            var p = group.at[x.step];
            return p ? (p.metrics || {})[key] : undefined;
          }),
          connect: several,
        };
      });
      var references = key && dictionary[key] ? dictionary[key].reference || [] : [];
      chart.draw(points.length ? series.xs : [], lines, smoothing, references);
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

    // The verdict (reading.js), then its notes: one line per rule, with its window and numbers.
    // `outcome`: how the job ended; a failed job's verdict is never drawn as a good one.
    function renderReading(reading, outcome) {
      var box = byId("rv-reading");
      box.setAttribute("data-outcome", outcome || "");
      if (!reading) return;
      window.rvReading.render(box, reading, fmt, fmtDelta);
      var notes = box.querySelector(".rv-reading-notes");
      if (!notes) {
        notes = html("ul", "rv-reading-notes");
        notes.setAttribute("aria-label", "How each rule read");
        box.querySelector(".rv-reading-why").after(notes);
      }
      var said = (Array.isArray(reading.notes) ? reading.notes : []).filter(function (n) {
        return typeof n === "string" && n;
      });
      notes.replaceChildren.apply(notes, said.map(function (n) { return html("li", "", n); }));
      notes.hidden = !said.length;
    }

    function update(newKept, cards, reading, listedKeys, outcome) {
      kept = newKept;
      points = kept.list();
      keys = knownKeys(listedKeys);
      renderReading(reading, outcome);
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

  window.rvTraining = window.rvTraining || {};
  window.rvTraining.metrics = create;
  window.rvTraining.fmt = fmt;
  window.rvTraining.fmtDelta = fmtDelta;
  window.rvTraining.duration = duration;
  window.rvTraining.count = count;
  window.rvTraining.rate = rate;
})();
