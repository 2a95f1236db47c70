// Relax Rollout Viewer: every curve of the trends page at once, as a grid of small charts
// (renderGrid), as TensorBoard and W&B show them. Each is a button: clicking it draws
// that curve large in the main chart. Each has its axes' ends: the lowest and highest value
// drawn, the first and last step. With other runs overlaid, each draws every run (one colour
// per run) and renderRunLegend says which is which.
//
//   renderGrid(box, points, panels, options)
//     panels: [{choice, label, lines: [{key, label, cls, values, dash?}], primary?}], values
//       aligned with points; primary: the index of the line whose latest value the panel shows
//       (default: the only line)
//     options: {format(value, key), selected: choice, pick(choice)}
//   renderRunLegend(list, runs): runs [{name, label, cls}] as swatches and names; none: hidden.
// Geometry is SVG attributes and looks are CSS classes (trends.css): no inline style.
import { element as html, svg } from "./lib/dom.js";
import { finite } from "./lib/numbers.js";

const W = 240;
const H = 88;
const PAD = 4; // the small chart's viewBox, px
const FLAT = 1e-9; // a spread this small against the values is rounding, not a change

function range(points, lines) {
  const ys = [].concat.apply(
    [],
    lines.map((l) => l.values.filter(finite)),
  );
  if (!ys.length || !points.length) return null;
  const high = Math.max.apply(null, ys);
  let low = Math.min.apply(null, ys);
  // A flat curve whose values differ only by rounding (0.05 and 0.05000000000000001) is flat.
  if (high - low <= FLAT * Math.max(Math.abs(high), Math.abs(low))) low = high;
  return {
    low: low,
    high: high,
    x0: points[0].step,
    x1: points[points.length - 1].step,
  };
}

// A line's path, broken where a step has no value; a lone point is a dot.
function pathOf(values, points, x, y) {
  let d = "";
  let pen = "M";
  values.forEach((v, i) => {
    if (!finite(v)) {
      pen = "M";
      return;
    }
    d += pen + x(points[i].step).toFixed(1) + "," + y(v).toFixed(1);
    pen = "L";
  });
  return d && d.indexOf("L") < 0 ? d + "h1" : d;
}

// The lines of one panel on a shared scale, broken where a step has no value.
function small(points, lines, r) {
  const box = svg("svg", {
    class: "rv-mini-chart",
    viewBox: "0 0 " + W + " " + H,
    preserveAspectRatio: "none",
    "aria-hidden": "true",
  });
  if (!r) return box;
  function x(step) {
    return r.x1 > r.x0 ? PAD + ((step - r.x0) * (W - 2 * PAD)) / (r.x1 - r.x0) : W / 2;
  }
  function y(v) {
    return r.high > r.low ? H - PAD - ((v - r.low) * (H - 2 * PAD)) / (r.high - r.low) : H / 2;
  }
  // the rules at the highest and the lowest value, which the labels beside them name
  [PAD, H - PAD].forEach((at) => {
    svg("line", { class: "rv-mini-rule", x1: 0, x2: W, y1: at, y2: at }, box);
  });
  // the first line (the current run's, with others overlaid) drawn last: on top where they meet
  lines
    .slice()
    .reverse()
    .forEach((line) => {
      const d = pathOf(line.values, points, x, y);
      if (!d) return; // no value at all (another run without this curve)
      const cls = "rv-mini-line " + (line.cls || "rv-line-0");
      const path = svg(
        "path",
        {
          class: cls + (line.dash ? " rv-mini-dash-" + line.dash : ""),
          "data-key": line.key,
          d: d,
        },
        box,
      );
      if (line.run) path.setAttribute("data-run", line.run);
    });
  return box;
}

// The chart with its axes' ends: values on the left (highest at the top), steps below.
function plot(points, lines, format) {
  const r = range(points, lines);
  const key = lines.length ? lines[0].key : null;
  const wrap = html("span", "rv-mini-plot");
  const yAxis = html("span", "rv-mini-axis rv-mini-y");
  const xAxis = html("span", "rv-mini-axis rv-mini-x");
  if (r) {
    label(yAxis, "rv-mini-high", format(r.high, key), r.high);
    label(yAxis, "rv-mini-low", format(r.low, key), r.low);
    label(xAxis, "rv-mini-first", "step " + r.x0, r.x0);
    label(xAxis, "rv-mini-last", String(r.x1), r.x1);
  }
  wrap.append(yAxis, small(points, lines, r), xAxis);
  return wrap;
}
function label(axis, cls, text, value) {
  axis.appendChild(html("span", cls, text)).setAttribute("data-value", value);
}

function lastFinite(values) {
  for (let i = values.length - 1; i >= 0; i--) if (finite(values[i])) return values[i];
  return null;
}

export function renderGrid(box, points, panels, options) {
  box.replaceChildren(
    ...panels.map((panel) => {
      const button = html("button", "rv-mini");
      button.type = "button";
      button.setAttribute("data-series", panel.choice);
      button.setAttribute("aria-pressed", String(panel.choice === options.selected));
      button.appendChild(html("span", "rv-mini-title", panel.label));
      const primary = "primary" in panel ? panel.primary : panel.lines.length === 1 ? 0 : -1;
      if (primary >= 0) {
        const line = panel.lines[primary];
        const latest = lastFinite(line.values);
        button
          .appendChild(html("span", "rv-mini-latest", options.format(latest, line.key)))
          .setAttribute("data-value", latest === null ? "" : latest);
      } else {
        button.appendChild(html("span", "rv-mini-latest rv-meta", panel.lines.length + " lines"));
      }
      button.appendChild(plot(points, panel.lines, options.format));
      button.title = "Draw " + panel.label + " large";
      button.addEventListener("click", () => {
        options.pick(panel.choice);
      });
      return button;
    }),
  );
}

export function renderRunLegend(list, runs) {
  list.hidden = !runs.length;
  list.replaceChildren(
    ...runs.map((run) => {
      const item = html("li", "rv-legend-item " + run.cls);
      item.setAttribute("data-run", run.name);
      item.append(html("span", "rv-swatch rv-run-swatch"), run.label);
      return item;
    }),
  );
}
