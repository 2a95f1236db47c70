// Relax Rollout Viewer: a line chart of per-step values, drawn as SVG. It needs shared.js
// (window.rv); page scripts load it after that and use its one global, window.rvChart:
//
//   var chart = rvChart.create(svgElement, {
//     tooltip: element,        // the crosshair's values box (required)
//     legend: element,         // a <ul> for the legend (optional)
//     href: function (point),  // a point's link (optional; without it a click opens nothing)
//     format: function (value, key),  // a value as text (optional: String, "–" when missing)
//     percent: function (key),        // whether a key's values are shares, shown in % (optional)
//     xLabel: "step",          // the x axis' name (optional)
//     gapReason: function (point, key),  // why a point has no value, in the tooltip (optional)
//     place, decorate: the tooltip by the cursor, marks over the lines (optional; called as
//       rvChartExtras.place and .decorate in chart-extras.js are)
//   });
//   chart.draw(points, lines, smoothing, references);
//     points: [{step, name?}, ...] in step order (x positions; `name` goes to data-name)
//     lines: [{key, label, values, cls?, mark?, connect?}, ...], values aligned with points
//       (non-finite: a gap, not 0); cls: instead of rv-line-N; mark: "max"/"min", the best
//       point (for `decorate`); connect: the line runs on over missing values
//     smoothing: the EMA weight, 0 (raw) to 0.99
//     references: [{value, label}, ...] dashed horizontal lines, kept in view (optional)
//   rvChart.sparkline(values): a small <svg class="rv-spark">; rvChart.ema, rvChart.ticks.
// Nothing here knows a page's ids or URLs: elements and links come from the caller. Nothing
// sets an inline style (the CSP forbids it): geometry is SVG attributes, looks are CSS classes
// (rv-line-0 ... rv-line-7, rv-crosshair, rv-trend-point, ... in trends.css).
(function () {
  "use strict";

  var SVG = "http://www.w3.org/2000/svg";
  var PAD = { left: 64, right: 18, top: 14, bottom: 38 }; // chart margins, px
  var LINE_CLASSES = 8; // .rv-line-0 ... .rv-line-7

  var finite = window.rv.finite; // shared.js
  var html = window.rv.element;
  function svg(tag, attrs, parent) {
    var node = document.createElementNS(SVG, tag);
    Object.keys(attrs).forEach(function (name) { node.setAttribute(name, attrs[name]); });
    return parent ? parent.appendChild(node) : node;
  }

  // TensorBoard's debiased exponential moving average: missing values are skipped (and stay
  // missing), and the early points are not dragged towards 0.
  function ema(values, weight) {
    var last = 0, count = 0;
    return values.map(function (v) {
      if (!finite(v)) return null;
      last = last * weight + (1 - weight) * v;
      return last / (1 - Math.pow(weight, ++count));
    });
  }

  // About `count` round tick values covering [low, high], as d3 picks them.
  function ticks(low, high, count) {
    if (!(high > low)) return [low];
    var raw = (high - low) / count, power = Math.pow(10, Math.floor(Math.log10(raw)));
    var error = raw / power;
    var unit = power * (error >= 7.07 ? 10 : error >= 3.16 ? 5 : error >= 1.41 ? 2 : 1);
    var out = [], t = Math.ceil(low / unit) * unit;
    for (; t <= high + unit * 1e-9; t += unit) out.push(+t.toPrecision(12));
    return out;
  }

  // Step -> x and value -> y, from the steps and the shown values (with some headroom).
  function scales(points, lines, width, height, extra) {
    var x0 = points[0].step, x1 = points[points.length - 1].step;
    var ys = [].concat.apply(extra, lines.map(function (l) { return l.raw.filter(finite); }));
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

  // Path through the finite values, broken where a step has none (a gap, never a 0).
  function pathOf(values, points, scale, connect) {
    var d = "", pen = "M";
    values.forEach(function (v, i) {
      if (v === null) { pen = connect && d ? pen : "M"; return; }
      d += pen + scale.x(points[i].step).toFixed(2) + "," + scale.y(v).toFixed(2);
      pen = "L";
    });
    return d;
  }

  function sparkline(values) {
    var width = 160, height = 36;
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

  function create(chart, options) {
    var tooltip = options.tooltip, legend = options.legend || null, href = options.href || null;
    var format = options.format || function (v) { return finite(v) ? String(v) : "–"; };
    var percent = options.percent || function () { return false; };
    var xLabel = options.xLabel || "step";
    var heading = xLabel.charAt(0).toUpperCase() + xLabel.slice(1);
    var points = [], series = [], lines = [], scale = null, hoverStep = null, smoothing = 0, references = [];

    function draw(newPoints, newLines, weight, refs) {
      points = newPoints; series = newLines; smoothing = weight;
      references = (refs || []).filter(function (r) { return finite(r.value); });
      chart.setAttribute("data-smoothing", smoothing);
      lines = newLines.map(function (l, i) {
        var raw = l.values.map(function (v) { return finite(v) ? v : null; });
        return { key: l.key, label: l.label, cls: l.cls || "rv-line-" + (i % LINE_CLASSES), raw: raw,
          smooth: ema(raw, smoothing), mark: l.mark || null, connect: !!l.connect };
      });
      chart.replaceChildren();
      if (!points.length) return hideHover();
      var width = Math.max(chart.clientWidth, 320), height = Math.max(chart.clientHeight, 200);
      chart.setAttribute("viewBox", "0 0 " + width + " " + height);
      scale = scales(points, lines, width, height, references.map(function (r) { return r.value; }));
      drawAxes(width, height);
      references.forEach(drawReference);
      lines.forEach(drawLine);
      if (options.decorate) options.decorate(chart, scale, lines, points);
      var cross = svg("g", { "class": "rv-crosshair" }, chart);
      svg("line", { "class": "rv-crosshair-line", x1: 0, x2: 0, y1: PAD.top,
        y2: height - PAD.bottom }, cross);
      lines.forEach(function (line) {
        svg("circle", { "class": "rv-hover-dot " + line.cls, r: 5, cx: 0, cy: 0 }, cross);
      });
      if (legend) drawLegend();
      if (hoverStep !== null) showHover(hoverStep);
    }

    function drawAxes(width, height) {
      var s = scale, grid = svg("g", { "class": "rv-axes" }, chart);
      var share = lines.length && percent(lines[0].key);
      var yTicks = ticks(s.y0, s.y1, 5), unit = (yTicks[1] - yTicks[0]) * (share ? 100 : 1);
      var digits = yTicks.length > 1 ? Math.max(0, -Math.floor(Math.log10(unit) + 1e-9)) : 4;
      yTicks.forEach(function (t) {
        var y = s.y(t).toFixed(1);
        svg("line", { "class": "rv-gridline", x1: s.left, x2: s.right, y1: y, y2: y }, grid);
        svg("text", { "class": "rv-tick", x: s.left - 6, y: y, dy: "0.32em", "text-anchor": "end" },
          grid).textContent = share ? (100 * t).toFixed(digits) + " %" : t.toFixed(digits);
      });
      var room = Math.max(2, Math.floor((s.right - s.left) / 80)); // labels ~80 px apart at least
      var xTicks = ticks(s.x0, s.x1, Math.min(8, room, Math.max(s.x1 - s.x0, 1)));
      xTicks.filter(Number.isInteger).forEach(function (t) {
        var x = s.x(t).toFixed(1);
        svg("line", { "class": "rv-tickmark", x1: x, x2: x, y1: s.bottom, y2: s.bottom + 4 }, grid);
        svg("text", { "class": "rv-tick", x: x, y: s.bottom + 16, "text-anchor": "middle" }, grid)
          .textContent = String(t);
      });
      svg("line", { "class": "rv-axis-line", x1: s.left, x2: s.right, y1: s.bottom, y2: s.bottom },
        grid);
      svg("text", { "class": "rv-axis-label", x: (s.left + s.right) / 2, y: height - 4,
        "text-anchor": "middle" }, grid).textContent = xLabel;
    }

    function drawReference(ref) {
      var y = scale.y(ref.value).toFixed(2);
      var group = svg("g", { "class": "rv-reference", "data-value": ref.value }, chart);
      svg("line", { "class": "rv-reference-line", x1: scale.left, x2: scale.right, y1: y, y2: y }, group);
      svg("text", { "class": "rv-reference-label", x: scale.right - 4, y: y, dy: "-0.35em",
        "text-anchor": "end" }, group).textContent = ref.label || "reference " + ref.value;
    }

    // A faint raw line, the smoothed line over it, and every raw value as a dot (a link to its
    // step when the caller gave links).
    function drawLine(line) {
      var group = svg("g", { "class": "rv-trend-line " + line.cls, "data-key": line.key }, chart);
      [["rv-raw-line", line.raw], ["rv-ema-line", line.smooth]].forEach(function (pair) {
        svg("path", { "class": pair[0], d: pathOf(pair[1], points, scale, line.connect) }, group);
      });
      line.raw.forEach(function (v, i) {
        if (v === null) return;
        var point = points[i], attrs = { "class": "rv-trend-point-link", "data-step": point.step };
        if (point.name !== undefined) attrs["data-name"] = point.name;
        if (href) { attrs.href = href(point, line.key); attrs.tabindex = "-1"; }
        var link = svg(href ? "a" : "g", attrs, group);
        svg("circle", { "class": "rv-trend-point", cx: scale.x(point.step).toFixed(2),
          cy: scale.y(v).toFixed(2), r: 3.5 }, link);
        svg("title", {}, link).textContent =
          line.label + " at " + xLabel + " " + point.step + ": " + format(v, line.key);
      });
    }

    function drawLegend() {
      legend.replaceChildren.apply(legend, lines.map(function (line) {
        var item = html("li", "rv-legend-item " + line.cls);
        item.setAttribute("data-key", line.key);
        item.append(html("span", "rv-swatch"), line.label);
        return item;
      }));
      legend.appendChild(html("li", "rv-meta",
        "dots: each " + xLabel + "; faint line: raw; solid: smoothed"));
    }

    // -- hover, keyboard, click ----------------------------------------------------------
    function toChart(event) {
      var matrix = chart.getScreenCTM();
      return matrix && new DOMPoint(event.clientX, event.clientY).matrixTransform(matrix.inverse());
    }
    function nearestIndex(event) {
      var at = toChart(event), x = at && at.x, best = 0;
      if (!at || !points.length) return -1;
      points.forEach(function (p, i) {
        if (Math.abs(scale.x(p.step) - x) < Math.abs(scale.x(points[best].step) - x)) best = i;
      });
      return best;
    }
    function indexOfStep(step) {
      return points.findIndex(function (p) { return p.step === step; });
    }

    // The crosshair at `step`, and the tooltip with each shown line's raw and smoothed value.
    function showHover(step, cursorY) {
      var i = indexOfStep(step);
      if (i < 0) return hideHover();
      hoverStep = step;
      var x = scale.x(step).toFixed(2);
      var cross = chart.querySelector(".rv-crosshair"), line = cross.querySelector("line");
      cross.classList.add("rv-shown");
      ["x1", "x2"].forEach(function (name) { line.setAttribute(name, x); });
      tooltip.replaceChildren(html("strong", "", heading + " " + step));
      tooltip.setAttribute("data-step", step);
      var list = tooltip.appendChild(html("ul", "rv-tip-rows"));
      cross.querySelectorAll(".rv-hover-dot").forEach(function (dot, k) {
        var l = lines[k], v = l.raw[i];
        dot.classList.toggle("rv-shown", v !== null);
        if (v !== null) { dot.setAttribute("cx", x); dot.setAttribute("cy", scale.y(v).toFixed(2)); }
        var row = list.appendChild(html("li", "rv-tip-row " + l.cls));
        row.setAttribute("data-key", l.key);
        row.appendChild(html("span", "rv-swatch"));
        row.appendChild(html("span", "rv-tip-label", l.label + " "));
        row.appendChild(html("span", "rv-tip-value", format(v, l.key)))
          .setAttribute("data-value", v === null ? "" : v);
        var why = v === null && options.gapReason && options.gapReason(points[i], l.key);
        if (why) row.appendChild(html("span", "rv-tip-gap rv-meta", " " + why));
        if (v === null || smoothing === 0) return;
        var smooth = " smoothed " + format(l.smooth[i], l.key);
        row.appendChild(html("span", "rv-tip-smooth rv-meta", smooth))
          .setAttribute("data-value", l.smooth[i]);
      });
      tooltip.classList.toggle("rv-tip-left", +x > chart.viewBox.baseVal.width / 2);
      tooltip.hidden = false;
      if (options.place) options.place(tooltip, chart, +x, cursorY);
    }
    function hideHover() {
      hoverStep = null;
      tooltip.hidden = true;
      var cross = chart.querySelector(".rv-crosshair");
      if (cross) cross.classList.remove("rv-shown");
    }

    function open(i) { if (href && i >= 0) window.location.assign(href(points[i])); }

    chart.addEventListener("mousemove", function (event) {
      var i = nearestIndex(event), at = toChart(event);
      if (i >= 0) showHover(points[i].step, at ? at.y : undefined);
    });
    chart.addEventListener("mouseleave", function (event) {
      // A redraw under a still mouse may "leave" the removed point: only a real exit counts.
      var box = chart.getBoundingClientRect(), x = event.clientX, y = event.clientY;
      var inside = x > box.left && x < box.right && y > box.top && y < box.bottom;
      if (!inside && document.activeElement !== chart) hideHover();
    });
    chart.addEventListener("click", function (event) {
      if (event.target.closest("a")) return; // a point: its own link navigates
      open(nearestIndex(event));
    });
    chart.addEventListener("focus", function () {
      var last = points[points.length - 1];
      if (hoverStep === null && last) showHover(last.step);
    });
    chart.addEventListener("blur", hideHover);
    chart.addEventListener("keydown", function (event) {
      var i = indexOfStep(hoverStep), last = points.length - 1;
      var moves = { ArrowLeft: i - 1, ArrowRight: i + 1, Home: 0, End: last };
      if (event.key === "Enter") {
        event.preventDefault();
        open(i);
      } else if (event.key in moves && last >= 0) {
        event.preventDefault();
        showHover(points[Math.min(Math.max(moves[event.key], 0), last)].step);
      }
    });
    window.addEventListener("resize", function () {
      if (points.length) draw(points, series, smoothing, references); // the reference lines too
    });

    return { draw: draw };
  }

  window.rvChart = { create: create, sparkline: sparkline, ema: ema, ticks: ticks, svg: svg };
})();
