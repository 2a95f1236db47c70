// Relax Rollout Viewer: the trends page of a bucket. Draws the per-step curves, the metric
// cards and the convergence reading from the trends JSON, and keeps them current.
// Both URLs come from data-* attributes of <main> (the app may sit under any prefix). Text from
// the data reaches the page only through textContent, and nothing sets an inline style (the
// CSP forbids it): geometry is SVG attributes, looks are CSS classes in trends.css.
(function () {
  "use strict";

  var SVG = "http://www.w3.org/2000/svg";
  var PAD = { left: 64, right: 18, top: 14, bottom: 38 }; // chart margins, px
  var INDEX_POLL_MS = 700; // at most, while the server is still indexing steps
  var SMOOTHING_KEY = "rv-trends-smoothing";
  var LINE_CLASSES = 8; // .rv-line-0 ... .rv-line-7 in trends.css
  var GROUPS = { status: "Status mix", dataset: "Eval accuracy per dataset",
    component: "Reward components" };
  var SHARES = { truncation_rate: 1, zero_signal_share: 1, success_share: 1 };

  var main, chart, tooltip;
  var pollMs = 3000; // afterwards (new steps, or a growing last step): init() reads data-poll-ms
  var state = {
    points: [], series: [], data: null, done: false, cursor: null, busy: false, timer: null,
    choice: null, smoothing: 0.6, lines: [], scale: null, hoverStep: null, optionsKey: "",
  };

  // -- small helpers ---------------------------------------------------------------------
  function byId(id) { return document.getElementById(id); }
  function html(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = text;
    return node;
  }
  function svg(tag, attrs, parent) {
    var node = document.createElementNS(SVG, tag);
    Object.keys(attrs).forEach(function (name) { node.setAttribute(name, attrs[name]); });
    if (parent) parent.appendChild(node);
    return node;
  }
  function finite(v) { return typeof v === "number" && isFinite(v); }
  function isShare(key) { return SHARES[key] === 1 || key.indexOf("status.") === 0; }
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
  function stepUrl(point) {
    return state.data.step_url.split("{step}").join(encodeURIComponent(point.name));
  }

  // TensorBoard's debiased exponential moving average: missing values are skipped (and stay
  // missing), and the early points are not dragged towards 0.
  function ema(values, weight) {
    var last = 0, count = 0;
    return values.map(function (v) {
      if (!finite(v)) return null;
      last = last * weight + (1 - weight) * v;
      count += 1;
      return last / (1 - Math.pow(weight, count));
    });
  }

  // About `count` round tick values covering [low, high], as d3 picks them.
  function ticks(low, high, count) {
    if (!(high > low)) return [low];
    var raw = (high - low) / count, power = Math.pow(10, Math.floor(Math.log10(raw)));
    var error = raw / power;
    var unit = power * (error >= 7.07 ? 10 : error >= 3.16 ? 5 : error >= 1.41 ? 2 : 1);
    var out = [];
    for (var t = Math.ceil(low / unit) * unit; t <= high + unit * 1e-9; t += unit) {
      out.push(+t.toPrecision(12));
    }
    return out;
  }

  // -- fetching and polling --------------------------------------------------------------
  // GET a JSON URL; on failure say so and try again later (a restarting server comes back).
  function request(url, use, retry) {
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
  // one may have grown, and a point with the same step replaces the old one.
  function loadTrends(incremental, pollCursor) {
    var url = new URL(main.dataset.trendsUrl, window.location.href);
    var known = state.points.length;
    var after = incremental && known >= 2 ? state.points[known - 2].step : -1;
    if (after >= 0) url.searchParams.set("after", after);
    request(url, function (data) {
      var kept = state.points.filter(function (p) { return p.step <= data.after; });
      state.points = (after >= 0 ? kept : []).concat(data.points);
      state.data = data;
      state.series = data.series;
      state.done = data.done;
      if (data.done) state.cursor = pollCursor || data.cursor;
      render();
      if (data.done) schedule(poll, pollMs);
      else schedule(function () { loadTrends(false); }, Math.min(INDEX_POLL_MS, pollMs));
    }, function () { loadTrends(incremental, pollCursor); });
  }

  // Cheap: asks whether a step appeared or grew since the cursor; hidden tabs do not ask.
  function poll() {
    if (document.visibilityState !== "visible") return; // resumed by visibilitychange
    var url = new URL(main.dataset.pollUrl, window.location.href);
    url.searchParams.set("after", state.cursor ? state.cursor.after : -1);
    url.searchParams.set("size", state.cursor ? state.cursor.size : -1);
    request(url, function (body) {
      if (body.changed) loadTrends(true, body.cursor);
      else schedule(poll, pollMs);
    }, poll);
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
    renderReading(data.reading);
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

  // Every number the reading compared: [name, label, compared with, rule, whether it holds].
  function readingRows(n, t) {
    return [
      ["steps", "steps with a reward", "min_steps " + t.min_steps,
        "at least min_steps (else warming up)", n.steps >= t.min_steps],
      ["window_steps", "steps read", "window " + t.window, "the last window steps", null],
      ["level", "mean over the window", "", "", null],
      ["shift", "shift between the halves", "noise " + fmt(n.noise),
        "plateau needs |shift| ≤ noise", finite(n.shift) && Math.abs(n.shift) <= n.noise],
      ["cv", "coefficient of variation", "plateau_cv " + t.plateau_cv,
        "plateau needs cv ≤ plateau_cv", finite(n.cv) && n.cv <= t.plateau_cv],
      ["range_ratio", "range / level", "plateau_range " + t.plateau_range,
        "plateau needs range_ratio ≤ plateau_range",
        finite(n.range_ratio) && n.range_ratio <= t.plateau_range],
      ["slope", "slope per step", "0", "not rising when slope < 0", finite(n.slope) && n.slope < 0],
    ].filter(function (row) { return row[0] in n; });
  }

  function renderReading(reading) {
    var box = byId("rv-reading"), numbers = reading.numbers || {};
    box.setAttribute("data-reading", reading.reading);
    box.querySelector(".rv-reading-name").textContent = reading.reading;
    box.querySelector(".rv-reading-why").textContent = reading.why;
    var rows = readingRows(numbers, reading.thresholds).map(function (row) {
      var tr = html("tr"), value = numbers[row[0]], holds = row[4];
      tr.setAttribute("data-number", row[0]);
      [row[1], row[0] === "shift" ? fmtDelta(value) : fmt(value), row[2], row[3]]
        .forEach(function (text) { tr.appendChild(html("td", "", text)); });
      tr.appendChild(holds === null ? html("td")
        : html("td", holds ? "rv-holds" : "rv-fails", holds ? "yes" : "no"));
      return tr;
    });
    var table = box.querySelector(".rv-reading-numbers"), body = table.querySelector("tbody");
    table.hidden = !rows.length;
    body.replaceChildren.apply(body, rows);
    var warnings = byId("rv-warnings");
    warnings.hidden = !reading.warnings.length;
    warnings.replaceChildren.apply(warnings, reading.warnings.map(function (w) {
      return html("li", "rv-warning", w);
    }));
    box.querySelector(".rv-disclaimer").textContent = "Heuristic: " + reading.disclaimer + ".";
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
      var direction = (available(card.key)[0] || { direction: 0 }).direction;
      var good = finite(card.delta) ? card.delta * direction : 0;
      if (good) delta.classList.add(good > 0 ? "rv-delta-good" : "rv-delta-bad");
      var spark = card.spark;
      delta.appendChild(html("span", "rv-meta", card.delta === null ? " first step"
        : " since step " + spark[spark.length - 2].step));
      node.appendChild(sparkline(spark));
      var flag = finite(card.threshold)
        ? "; a change beyond ±" + fmtDelta(card.threshold, card.key).slice(1) + " is flagged" : "";
      node.appendChild(html("p", "rv-note", "step " + card.step + flag));
      if (card.abnormal) node.appendChild(html("p", "rv-card-why", card.why));
      return node;
    }));
  }

  function sparkline(spark) {
    var width = 160, height = 36, values = spark.map(function (s) { return s.value; });
    var low = Math.min.apply(null, values), high = Math.max.apply(null, values);
    var box = svg("svg", { "class": "rv-spark", viewBox: "0 0 " + width + " " + height,
      preserveAspectRatio: "none", "aria-hidden": "true" });
    var d = values.map(function (v, i) {
      var x = values.length > 1 ? 2 + (i * (width - 4)) / (values.length - 1) : width / 2;
      var y = high > low ? height - 3 - ((v - low) / (high - low)) * (height - 6) : height / 2;
      return (i ? "L" : "M") + x.toFixed(1) + "," + y.toFixed(1);
    }).join("");
    svg("path", { "class": "rv-spark-line", d: d + (values.length === 1 ? "h1" : "") }, box);
    return box;
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
        var name = GROUPS[s.kind] || s.kind, group = groups[s.kind];
        if (!group) { // every status (dataset, component) together first, then each alone
          group = groups[s.kind] = optgroup(name);
          group.appendChild(new Option(name + " (all together)", "all:" + s.kind));
        }
        group.appendChild(new Option(s.label, s.key));
      });
      select.replaceChildren.apply(select, Object.keys(groups).map(function (kind) {
        return groups[kind];
      }).filter(function (g) { return g.children.length; }));
    }
    select.value = effectiveChoice() || "";
  }
  function optgroup(label) {
    var node = html("optgroup");
    node.label = label;
    return node;
  }

  // -- the chart -------------------------------------------------------------------------
  function renderChart() {
    var choice = effectiveChoice();
    var width = Math.max(chart.clientWidth, 320), height = Math.max(chart.clientHeight, 200);
    chart.setAttribute("viewBox", "0 0 " + width + " " + height);
    chart.setAttribute("data-series", choice || "");
    chart.setAttribute("data-smoothing", state.smoothing);
    state.lines = available(choice).map(function (s, i) {
      var raw = state.points.map(function (p) {
        return finite(p.metrics[s.key]) ? p.metrics[s.key] : null;
      });
      return { key: s.key, label: s.label, cls: "rv-line-" + (i % LINE_CLASSES), raw: raw,
        smooth: ema(raw, state.smoothing) };
    });
    state.scale = scales(width, height);
    chart.replaceChildren();
    drawAxes(width, height);
    state.lines.forEach(drawLine);
    var cross = svg("g", { "class": "rv-crosshair" }, chart);
    svg("line", { "class": "rv-crosshair-line", x1: 0, x2: 0, y1: PAD.top,
      y2: height - PAD.bottom }, cross);
    state.lines.forEach(function (line) {
      svg("circle", { "class": "rv-hover-dot " + line.cls, r: 5, cx: 0, cy: 0 }, cross);
    });
    renderLegend();
    if (state.hoverStep !== null) showHover(state.hoverStep);
  }

  // Step -> x and value -> y, from the steps and the shown values (with some headroom).
  function scales(width, height) {
    var x0 = state.points[0].step, x1 = state.points[state.points.length - 1].step;
    var ys = [].concat.apply([], state.lines.map(function (l) { return l.raw.filter(finite); }));
    var y0 = ys.length ? Math.min.apply(null, ys) : 0, y1 = ys.length ? Math.max.apply(null, ys) : 1;
    var pad = y1 > y0 ? (y1 - y0) * 0.08 : Math.abs(y0) * 0.1 || 0.5;
    var left = PAD.left, right = width - PAD.right, top = PAD.top, bottom = height - PAD.bottom;
    return {
      x0: x0, x1: x1, y0: y0 - pad, y1: y1 + pad, left: left, right: right, bottom: bottom,
      x: function (step) {
        return x1 > x0 ? left + ((step - x0) * (right - left)) / (x1 - x0) : (left + right) / 2;
      },
      y: function (v) { return bottom - ((v - (y0 - pad)) * (bottom - top)) / (y1 - y0 + 2 * pad); },
    };
  }

  function drawAxes(width, height) {
    var s = state.scale, grid = svg("g", { "class": "rv-axes" }, chart);
    var share = state.lines.length && isShare(state.lines[0].key);
    var yTicks = ticks(s.y0, s.y1, 5), unit = (yTicks[1] - yTicks[0]) * (share ? 100 : 1);
    var digits = yTicks.length > 1 ? Math.max(0, -Math.floor(Math.log10(unit) + 1e-9)) : 4;
    yTicks.forEach(function (t) {
      var y = s.y(t).toFixed(1);
      svg("line", { "class": "rv-gridline", x1: s.left, x2: s.right, y1: y, y2: y }, grid);
      svg("text", { "class": "rv-tick", x: s.left - 6, y: y, dy: "0.32em", "text-anchor": "end" },
        grid).textContent = share ? (100 * t).toFixed(digits) + " %" : t.toFixed(digits);
    });
    var xTicks = ticks(s.x0, s.x1, Math.min(8, Math.max(s.x1 - s.x0, 1)));
    xTicks.filter(Number.isInteger).forEach(function (t) {
      var x = s.x(t).toFixed(1);
      svg("line", { "class": "rv-tickmark", x1: x, x2: x, y1: s.bottom, y2: s.bottom + 4 }, grid);
      svg("text", { "class": "rv-tick", x: x, y: s.bottom + 16, "text-anchor": "middle" }, grid)
        .textContent = String(t);
    });
    svg("line", { "class": "rv-axis-line", x1: s.left, x2: s.right, y1: s.bottom, y2: s.bottom },
      grid);
    svg("text", { "class": "rv-axis-label", x: (s.left + s.right) / 2, y: height - 4,
      "text-anchor": "middle" }, grid).textContent = "step";
  }

  // Path through the finite values, broken where a step has none (a gap, never a 0).
  function pathOf(values) {
    var d = "", pen = "M";
    values.forEach(function (v, i) {
      if (v === null) { pen = "M"; return; }
      d += pen + state.scale.x(state.points[i].step).toFixed(2) + "," + state.scale.y(v).toFixed(2);
      pen = "L";
    });
    return d;
  }

  // A faint raw line, the smoothed line over it, and every raw value as a dot linking its step.
  function drawLine(line) {
    var group = svg("g", { "class": "rv-trend-line " + line.cls, "data-key": line.key }, chart);
    svg("path", { "class": "rv-raw-line", d: pathOf(line.raw) }, group);
    svg("path", { "class": "rv-ema-line", d: pathOf(line.smooth) }, group);
    line.raw.forEach(function (v, i) {
      if (v === null) return;
      var point = state.points[i];
      var link = svg("a", { "class": "rv-trend-point-link", href: stepUrl(point), tabindex: "-1",
        "data-step": point.step, "data-name": point.name }, group);
      svg("circle", { "class": "rv-trend-point", cx: state.scale.x(point.step).toFixed(2),
        cy: state.scale.y(v).toFixed(2), r: 3.5 }, link);
      svg("title", {}, link).textContent =
        line.label + " at step " + point.step + ": " + fmt(v, line.key);
    });
  }

  function renderLegend() {
    var legend = byId("rv-legend");
    legend.replaceChildren.apply(legend, state.lines.map(function (line) {
      var item = html("li", "rv-legend-item " + line.cls);
      item.setAttribute("data-key", line.key);
      item.appendChild(html("span", "rv-swatch"));
      item.appendChild(document.createTextNode(line.label));
      return item;
    }));
    legend.appendChild(html("li", "rv-meta", "dots: each step; faint line: raw; solid: smoothed"));
  }

  // -- hover, keyboard, click ------------------------------------------------------------
  function nearestIndex(event) {
    var matrix = chart.getScreenCTM();
    if (!matrix || !state.points.length) return -1;
    var x = new DOMPoint(event.clientX, event.clientY).matrixTransform(matrix.inverse()).x;
    var best = 0;
    state.points.forEach(function (p, i) {
      var distance = Math.abs(state.scale.x(p.step) - x);
      if (distance < Math.abs(state.scale.x(state.points[best].step) - x)) best = i;
    });
    return best;
  }
  function indexOfStep(step) {
    for (var i = 0; i < state.points.length; i++) if (state.points[i].step === step) return i;
    return -1;
  }

  // The crosshair at `step`, and the tooltip with each shown series' raw and smoothed value.
  function showHover(step) {
    var i = indexOfStep(step);
    if (i < 0) return hideHover();
    state.hoverStep = step;
    var x = state.scale.x(step).toFixed(2);
    var cross = chart.querySelector(".rv-crosshair"), line = cross.querySelector("line");
    cross.classList.add("rv-shown");
    line.setAttribute("x1", x);
    line.setAttribute("x2", x);
    tooltip.replaceChildren(html("strong", "", "Step " + step));
    tooltip.setAttribute("data-step", step);
    var list = tooltip.appendChild(html("ul", "rv-tip-rows"));
    cross.querySelectorAll(".rv-hover-dot").forEach(function (dot, k) {
      var l = state.lines[k], v = l.raw[i];
      dot.classList.toggle("rv-shown", v !== null);
      if (v !== null) dot.setAttribute("cx", x);
      if (v !== null) dot.setAttribute("cy", state.scale.y(v).toFixed(2));
      var row = list.appendChild(html("li", "rv-tip-row " + l.cls));
      row.setAttribute("data-key", l.key);
      row.appendChild(html("span", "rv-swatch"));
      row.appendChild(html("span", "rv-tip-label", l.label + " "));
      row.appendChild(html("span", "rv-tip-value", fmt(v, l.key)))
        .setAttribute("data-value", v === null ? "" : v);
      if (v === null || state.smoothing === 0) return;
      row.appendChild(html("span", "rv-tip-smooth rv-meta", " smoothed " + fmt(l.smooth[i], l.key)))
        .setAttribute("data-value", l.smooth[i]);
    });
    tooltip.classList.toggle("rv-tip-left", +x > chart.viewBox.baseVal.width / 2);
    tooltip.hidden = false;
  }
  function hideHover() {
    state.hoverStep = null;
    tooltip.hidden = true;
    var cross = chart.querySelector(".rv-crosshair");
    if (cross) cross.classList.remove("rv-shown");
  }

  function openStep(index) {
    if (index >= 0) window.location.assign(stepUrl(state.points[index]));
  }

  function setupChart() {
    chart.addEventListener("mousemove", function (event) {
      var i = nearestIndex(event);
      if (i >= 0) showHover(state.points[i].step);
    });
    chart.addEventListener("mouseleave", function (event) {
      // A redraw under a still mouse may "leave" the removed point: only a real exit counts.
      var box = chart.getBoundingClientRect(), x = event.clientX, y = event.clientY;
      var inside = x > box.left && x < box.right && y > box.top && y < box.bottom;
      if (!inside && document.activeElement !== chart) hideHover();
    });
    chart.addEventListener("click", function (event) {
      if (event.target.closest("a")) return; // a point: its own link navigates
      openStep(nearestIndex(event));
    });
    chart.addEventListener("focus", function () {
      var last = state.points[state.points.length - 1];
      if (state.hoverStep === null && last) showHover(last.step);
    });
    chart.addEventListener("blur", hideHover);
    chart.addEventListener("keydown", function (event) {
      var i = indexOfStep(state.hoverStep), last = state.points.length - 1;
      var moves = { ArrowLeft: i - 1, ArrowRight: i + 1, Home: 0, End: last };
      if (event.key === "Enter") {
        event.preventDefault();
        openStep(i);
      } else if (event.key in moves && last >= 0) {
        event.preventDefault();
        showHover(state.points[Math.min(Math.max(moves[event.key], 0), last)].step);
      }
    });
  }

  function setupControls() {
    state.choice = new URLSearchParams(window.location.search).get("series") || "reward_mean";
    byId("rv-series").addEventListener("change", function (event) {
      state.choice = event.target.value;
      var url = new URL(window.location.href);
      url.searchParams.set("series", state.choice);
      history.replaceState(history.state, "", url); // a reload or a shared link keeps the curve
      if (state.points.length) renderChart();
    });
    var slider = byId("rv-smoothing");
    var stored = window.rv ? window.rv.storage.load(SMOOTHING_KEY, NaN) : NaN;
    if (stored >= 0 && stored <= 0.99) slider.value = stored;
    function setSmoothing() {
      state.smoothing = parseFloat(slider.value);
      byId("rv-smoothing-value").textContent = state.smoothing.toFixed(2);
      if (state.points.length) renderChart();
    }
    setSmoothing();
    slider.addEventListener("input", function () {
      if (window.rv) window.rv.storage.store(SMOOTHING_KEY, parseFloat(slider.value));
      setSmoothing();
    });
  }

  function init() {
    main = byId("rv-main");
    if (!main || !main.dataset.trendsUrl) return;
    if (window.rv) pollMs = window.rv.pollMs();
    chart = byId("rv-trend-chart");
    tooltip = byId("rv-crosshair-values");
    setupControls();
    setupChart();
    window.addEventListener("resize", function () { if (state.points.length) renderChart(); });
    document.addEventListener("visibilitychange", function () {
      if (document.visibilityState === "visible" && state.done && !state.busy) schedule(poll, 0);
    });
    loadTrends(false);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
