// Relax Rollout Viewer: every curve of the trends page at once, as a grid of small charts
// (renderGrid), as TensorBoard and W&B show them. Each is a button: clicking it draws
// that curve large in the main chart.
//
//   renderGrid(box, points, panels, options)
//     panels: [{choice, label, lines: [{key, label, cls, values}]}], values aligned with points
//     options: {format(value, key), selected: choice, pick(choice)}
// Geometry is SVG attributes and looks are CSS classes (trends.css): no inline style.
import { element as html, svg } from "./lib/dom.js";
import { finite } from "./lib/numbers.js";

const W = 240;
const H = 72;
const PAD = 4; // the small chart's viewBox, px

// The lines of one panel on a shared scale, broken where a step has no value.
function small(points, lines) {
  const box = svg("svg", {
    class: "rv-mini-chart",
    viewBox: "0 0 " + W + " " + H,
    preserveAspectRatio: "none",
    "aria-hidden": "true",
  });
  const ys = [].concat.apply(
    [],
    lines.map((l) => l.values.filter(finite)),
  );
  if (!ys.length || !points.length) return box;
  const low = Math.min.apply(null, ys);
  const high = Math.max.apply(null, ys);
  const x0 = points[0].step;
  const x1 = points[points.length - 1].step;
  function x(step) {
    return x1 > x0 ? PAD + ((step - x0) * (W - 2 * PAD)) / (x1 - x0) : W / 2;
  }
  function y(v) {
    return high > low ? H - PAD - ((v - low) * (H - 2 * PAD)) / (high - low) : H / 2;
  }
  lines.forEach((line) => {
    let d = "";
    let pen = "M";
    line.values.forEach((v, i) => {
      if (!finite(v)) {
        pen = "M";
        return;
      }
      d += pen + x(points[i].step).toFixed(1) + "," + y(v).toFixed(1);
      pen = "L";
    });
    svg(
      "path",
      {
        class: "rv-mini-line " + (line.cls || "rv-line-0"),
        "data-key": line.key,
        d: d.indexOf("L") < 0 ? d + "h1" : d,
      },
      box,
    );
  });
  return box;
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
      if (panel.lines.length === 1) {
        const line = panel.lines[0];
        const latest = lastFinite(line.values);
        button
          .appendChild(html("span", "rv-mini-latest", options.format(latest, line.key)))
          .setAttribute("data-value", latest === null ? "" : latest);
      } else {
        button.appendChild(html("span", "rv-mini-latest rv-meta", panel.lines.length + " lines"));
      }
      button.appendChild(small(points, panel.lines));
      button.title = "Draw " + panel.label + " large";
      button.addEventListener("click", () => {
        options.pick(panel.choice);
      });
      return button;
    }),
  );
}
