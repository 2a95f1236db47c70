// Relax Rollout Viewer: a line chart of per-step values, drawn as SVG. The arithmetic (scales,
// ticks, smoothing, paths) is lib/scale.js; this draws it and handles the pointer and keys.
//
//   const chart = createChart(svgElement, {
//     tooltip: element,        // the crosshair's values box (required)
//     legend: element,         // a <ul> for the legend (optional)
//     href: function (point),  // a point's link (optional; without it a click opens nothing)
//     format: function (value, key),  // a value as text (optional: String, "–" when missing)
//     percent: function (key),        // whether a key's values are shares, shown in % (optional)
//     xLabel: "step",          // the x axis' name (optional)
//     gapReason: function (point, key),  // why a point has no value, in the tooltip (optional)
//     place, decorate: the tooltip by the cursor, marks over the lines (optional; called as
//       placeTooltip and decorator() of chart-extras.js are)
//     tools: createTools() of chart-tools.js (optional): log scale, zoom, wall clock, downloads
//   });
//   chart.draw(points, lines, smoothing, references);  chart.redraw(): the same again
//     points: [{step, name?}, ...] in step order (x positions; `name` goes to data-name)
//     lines: [{key, label, values, cls?, mark?, connect?}, ...], values aligned with points
//       (non-finite: a gap, not 0); cls: instead of rv-line-N; mark: "max"/"min", the best
//       point (for `decorate`); connect: the line runs on over missing values
//     smoothing: the EMA weight, 0 (raw) to 0.99
//     references: [{value, label}, ...] dashed horizontal lines, kept in view (optional)
//   sparkline(values): a small <svg class="rv-spark">.
// Nothing here knows a page's ids or URLs: elements and links come from the caller. Nothing
// sets an inline style (the CSP forbids it): geometry is SVG attributes, looks are CSS classes
// (rv-line-0 ... rv-line-7, rv-crosshair, rv-trend-point, ... in trends.css).
import { element as html, svg } from "./lib/dom.js";
import { finite } from "./lib/numbers.js";
import { ema, PAD, pathOf, scales, sparkPath, stepTicks, valueTicks } from "./lib/scale.js";

const LINE_CLASSES = 8; // .rv-line-0 ... .rv-line-7
const SPARK = { width: 160, height: 36 }; // a sparkline's viewBox, px

export function sparkline(values) {
  const box = svg("svg", {
    class: "rv-spark",
    viewBox: "0 0 " + SPARK.width + " " + SPARK.height,
    preserveAspectRatio: "none",
    "aria-hidden": "true",
  });
  svg("path", { class: "rv-spark-line", d: sparkPath(values, SPARK.width, SPARK.height) }, box);
  return box;
}

export function createChart(chart, options) {
  const tooltip = options.tooltip;
  const legend = options.legend || null;
  const href = options.href || null;
  const format = options.format || ((v) => (finite(v) ? String(v) : "–"));
  const percent = options.percent || (() => false);
  const xLabel = options.xLabel || "step";
  const heading = xLabel.charAt(0).toUpperCase() + xLabel.slice(1);
  let points = [];
  let lines = [];
  let scale = null;
  let hoverStep = null;
  let smoothing = 0;
  let references = [];
  let last = null; // draw's arguments, as given: a resize or a tool redraws them
  const tools = options.tools || null;

  function draw(givenPoints, givenLines, weight, givenRefs) {
    last = [givenPoints, givenLines, weight, givenRefs];
    const [newPoints, newLines, refs] = tools
      ? tools.prepare(givenPoints, givenLines, givenRefs || [])
      : [givenPoints, givenLines, givenRefs];
    points = newPoints;
    smoothing = weight;
    references = (refs || []).filter((r) => finite(r.value));
    chart.setAttribute("data-smoothing", smoothing);
    lines = newLines.map((l, i) => {
      const raw = l.values.map((v) => (finite(v) ? v : null));
      return {
        key: l.key,
        label: l.label,
        cls: l.cls || "rv-line-" + (i % LINE_CLASSES),
        raw: raw,
        smooth: ema(raw, smoothing),
        mark: l.mark || null,
        connect: !!l.connect,
      };
    });
    chart.replaceChildren();
    if (!points.length) return hideHover();
    const width = Math.max(chart.clientWidth, 320);
    const height = Math.max(chart.clientHeight, 200);
    chart.setAttribute("viewBox", "0 0 " + width + " " + height);
    let shown = references.map((r) => r.value);
    lines.forEach((l) => {
      shown = shown.concat(l.raw.filter(finite));
    });
    scale = (tools ? tools.scales : scales)(points, shown, width, height);
    drawAxes(height);
    references.forEach(drawReference);
    lines.forEach(drawLine);
    if (options.decorate) options.decorate(chart, scale, lines, points);
    if (tools) tools.drawn(scale, points);
    const cross = svg("g", { class: "rv-crosshair" }, chart);
    svg(
      "line",
      { class: "rv-crosshair-line", x1: 0, x2: 0, y1: PAD.top, y2: height - PAD.bottom },
      cross,
    );
    lines.forEach((line) => {
      svg("circle", { class: "rv-hover-dot " + line.cls, r: 5, cx: 0, cy: 0 }, cross);
    });
    if (legend) drawLegend();
    if (hoverStep !== null) showHover(hoverStep);
  }

  function drawAxes(height) {
    const s = scale;
    const grid = svg("g", { class: "rv-axes" }, chart);
    const share = lines.length && percent(lines[0].key);
    (s.yMarks ? s.yMarks(share) : valueTicks(s.y0, s.y1, share)).forEach((tick) => {
      const y = s.y(tick[0]).toFixed(1);
      svg("line", { class: "rv-gridline", x1: s.left, x2: s.right, y1: y, y2: y }, grid);
      svg(
        "text",
        { class: "rv-tick", x: s.left - 6, y: y, dy: "0.32em", "text-anchor": "end" },
        grid,
      ).textContent = tick[1];
    });
    const marks =
      s.xMarks || (() => stepTicks(s.x0, s.x1, s.right - s.left).map((t) => [s.x(t), t]));
    marks().forEach(([at, label]) => {
      const x = at.toFixed(1);
      svg("line", { class: "rv-tickmark", x1: x, x2: x, y1: s.bottom, y2: s.bottom + 4 }, grid);
      svg(
        "text",
        { class: "rv-tick", x: x, y: s.bottom + 16, "text-anchor": "middle" },
        grid,
      ).textContent = String(label);
    });
    svg(
      "line",
      { class: "rv-axis-line", x1: s.left, x2: s.right, y1: s.bottom, y2: s.bottom },
      grid,
    );
    svg(
      "text",
      { class: "rv-axis-label", x: (s.left + s.right) / 2, y: height - 4, "text-anchor": "middle" },
      grid,
    ).textContent = s.xName || xLabel;
  }

  function drawReference(ref) {
    const y = scale.y(ref.value).toFixed(2);
    const group = svg("g", { class: "rv-reference", "data-value": ref.value }, chart);
    svg(
      "line",
      { class: "rv-reference-line", x1: scale.left, x2: scale.right, y1: y, y2: y },
      group,
    );
    svg(
      "text",
      {
        class: "rv-reference-label",
        x: scale.right - 4,
        y: y,
        dy: "-0.35em",
        "text-anchor": "end",
      },
      group,
    ).textContent = ref.label || "reference " + ref.value;
  }

  // A faint raw line, the smoothed line over it, and every raw value as a dot (a link to its
  // step when the caller gave links).
  function drawLine(line) {
    const group = svg("g", { class: "rv-trend-line " + line.cls, "data-key": line.key }, chart);
    [
      ["rv-raw-line", line.raw],
      ["rv-ema-line", line.smooth],
    ].forEach((pair) => {
      svg("path", { class: pair[0], d: pathOf(pair[1], points, scale, line.connect) }, group);
    });
    line.raw.forEach((v, i) => {
      if (v === null) return;
      const point = points[i];
      const attrs = { class: "rv-trend-point-link", "data-step": point.step };
      if (point.name !== undefined) attrs["data-name"] = point.name;
      if (href) {
        attrs.href = href(point, line.key);
        attrs.tabindex = "-1";
      }
      const link = svg(href ? "a" : "g", attrs, group);
      svg(
        "circle",
        {
          class: "rv-trend-point",
          cx: scale.x(point.step).toFixed(2),
          cy: scale.y(v).toFixed(2),
          r: 3.5,
        },
        link,
      );
      svg("title", {}, link).textContent =
        line.label + " at " + xLabel + " " + point.step + ": " + format(v, line.key);
    });
  }

  function drawLegend() {
    legend.replaceChildren(
      ...lines.map((line) => {
        const item = html("li", "rv-legend-item " + line.cls);
        item.setAttribute("data-key", line.key);
        item.append(html("span", "rv-swatch"), line.label);
        return item;
      }),
    );
    legend.appendChild(
      html("li", "rv-meta", "dots: each " + xLabel + "; faint line: raw; solid: smoothed"),
    );
  }

  // -- hover, keyboard, click ----------------------------------------------------------
  function toChart(event) {
    const matrix = chart.getScreenCTM();
    return matrix && new DOMPoint(event.clientX, event.clientY).matrixTransform(matrix.inverse());
  }
  function nearestIndex(event) {
    const at = toChart(event);
    const x = at?.x;
    let best = 0;
    if (!at || !points.length) return -1;
    points.forEach((p, i) => {
      if (Math.abs(scale.x(p.step) - x) < Math.abs(scale.x(points[best].step) - x)) best = i;
    });
    return best;
  }
  function indexOfStep(step) {
    return points.findIndex((p) => p.step === step);
  }

  // The crosshair at `step`, and the tooltip with each shown line's raw and smoothed value.
  function showHover(step, cursorY) {
    const i = indexOfStep(step);
    if (i < 0) return hideHover();
    hoverStep = step;
    const x = scale.x(step).toFixed(2);
    const cross = chart.querySelector(".rv-crosshair");
    const line = cross.querySelector("line");
    cross.classList.add("rv-shown");
    ["x1", "x2"].forEach((name) => {
      line.setAttribute(name, x);
    });
    tooltip.replaceChildren(html("strong", "", heading + " " + step));
    tooltip.setAttribute("data-step", step);
    const list = tooltip.appendChild(html("ul", "rv-tip-rows"));
    cross.querySelectorAll(".rv-hover-dot").forEach((dot, k) => {
      const l = lines[k];
      const v = l.raw[i];
      dot.classList.toggle("rv-shown", v !== null);
      if (v !== null) {
        dot.setAttribute("cx", x);
        dot.setAttribute("cy", scale.y(v).toFixed(2));
      }
      const row = list.appendChild(html("li", "rv-tip-row " + l.cls));
      row.setAttribute("data-key", l.key);
      row.appendChild(html("span", "rv-swatch"));
      row.appendChild(html("span", "rv-tip-label", l.label + " "));
      row
        .appendChild(html("span", "rv-tip-value", format(v, l.key)))
        .setAttribute("data-value", v === null ? "" : v);
      const why = v === null && options.gapReason && options.gapReason(points[i], l.key);
      if (why) row.appendChild(html("span", "rv-tip-gap rv-meta", " " + why));
      if (v === null || smoothing === 0) return;
      const smooth = " smoothed " + format(l.smooth[i], l.key);
      row
        .appendChild(html("span", "rv-tip-smooth rv-meta", smooth))
        .setAttribute("data-value", l.smooth[i]);
    });
    tooltip.classList.toggle("rv-tip-left", +x > chart.viewBox.baseVal.width / 2);
    tooltip.hidden = false;
    if (options.place) options.place(tooltip, chart, +x, cursorY);
  }
  function hideHover() {
    hoverStep = null;
    tooltip.hidden = true;
    const cross = chart.querySelector(".rv-crosshair");
    if (cross) cross.classList.remove("rv-shown");
  }

  function open(i) {
    if (href && i >= 0) window.location.assign(href(points[i]));
  }

  chart.addEventListener("mousemove", (event) => {
    const i = nearestIndex(event);
    const at = toChart(event);
    if (i >= 0) showHover(points[i].step, at ? at.y : undefined);
  });
  chart.addEventListener("mouseleave", (event) => {
    // A redraw under a still mouse may "leave" the removed point: only a real exit counts.
    const box = chart.getBoundingClientRect();
    const x = event.clientX;
    const y = event.clientY;
    const inside = x > box.left && x < box.right && y > box.top && y < box.bottom;
    if (!inside && document.activeElement !== chart) hideHover();
  });
  chart.addEventListener("click", (event) => {
    if (event.target.closest("a")) return; // a point: its own link navigates
    open(nearestIndex(event));
  });
  chart.addEventListener("focus", () => {
    const last = points[points.length - 1];
    if (hoverStep === null && last) showHover(last.step);
  });
  chart.addEventListener("blur", hideHover);
  chart.addEventListener("keydown", (event) => {
    const i = indexOfStep(hoverStep);
    const last = points.length - 1;
    const moves = { ArrowLeft: i - 1, ArrowRight: i + 1, Home: 0, End: last };
    if (event.key === "Enter") {
      event.preventDefault();
      open(i);
    } else if (event.key in moves && last >= 0) {
      event.preventDefault();
      showHover(points[Math.min(Math.max(moves[event.key], 0), last)].step);
    }
  });
  function redraw() {
    if (last) draw(...last); // the reference lines too
  }
  window.addEventListener("resize", () => {
    if (points.length) redraw();
  });
  if (tools) tools.attach(chart, redraw, () => hoverStep);

  return { draw: draw, redraw: redraw };
}
