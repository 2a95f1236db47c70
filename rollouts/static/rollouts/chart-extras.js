// Relax Rollout Viewer: what the trends page adds to chart.js's line chart:
//
//   placeTooltip(tooltip, chart, x, y): the crosshair's values box moved into the chart, beside the
//     crosshair at x (right of it, or left near the right edge) and at the cursor's height y,
//     so it follows the mouse and never covers the points being read (they sit on the
//     crosshair). Without y (keys, a redraw) it keeps its last height.
//   decorator({format, word, gapReason}): a `decorate` for createChart that marks each
//     line's best point (a line's `mark`: "max" or "min"; word(line) names it, "best" or
//     "peak") and every step where no line has a value, with why (gapReason(point, key)).
// Geometry is SVG attributes (a foreignObject holds the box): nothing sets an inline style.
import { svg } from "./lib/dom.js";
import { finite } from "./lib/numbers.js";

const GAP_PX = 14; // between the crosshair and the box: wider than a hover dot (r 5)
const EDGE_PX = 4;
const holders = new WeakMap(); // tooltip -> its foreignObject
export function placeTooltip(tooltip, chart, x, y) {
  let holder = holders.get(tooltip);
  if (!holder) {
    holder = svg("foreignObject", { class: "rv-tip-object", x: 0, y: 0, width: 1, height: 1 });
    holders.set(tooltip, holder);
    holder.appendChild(tooltip);
    tooltip.classList.add("rv-tip-placed");
  }
  if (holder.parentNode !== chart) chart.appendChild(holder); // a redraw emptied the chart
  const box = chart.viewBox.baseVal;
  const matrix = chart.getScreenCTM();
  if (!matrix) return;
  if (finite(y)) holder.rvY = y;
  const cursor = finite(holder.rvY) ? holder.rvY : 0;
  holder.setAttribute("width", box.width);
  holder.setAttribute("height", box.height);
  const rect = tooltip.getBoundingClientRect();
  const w = Math.ceil(rect.width / matrix.a) + 1;
  const h = Math.ceil(rect.height / matrix.d) + 1;
  const left = x + GAP_PX + w <= box.width - EDGE_PX ? x + GAP_PX : x - GAP_PX - w;
  const top = Math.min(Math.max(cursor - h / 2, EDGE_PX), Math.max(box.height - h - EDGE_PX, 0));
  holder.setAttribute("x", Math.max(left, 0).toFixed(1));
  holder.setAttribute("y", top.toFixed(1));
  holder.setAttribute("width", w);
  holder.setAttribute("height", h);
  tooltip.setAttribute("data-side", left > x ? "right" : "left");
}

export function bestIndex(values, mark) {
  let best = -1;
  values.forEach((v, i) => {
    if (v === null) return;
    if (best < 0 || (mark === "min" ? v < values[best] : v > values[best])) best = i;
  });
  return best;
}

export function decorator(opts) {
  const format = opts.format || String;
  const word = opts.word || (() => "best");
  return (chart, scale, lines, points) => {
    drawGaps(chart, scale, lines, points, opts.gapReason);
    lines.forEach((line) => {
      if (!line.mark || line.raw.filter(finite).length < 2) return;
      const i = bestIndex(line.raw, line.mark);
      const point = points[i];
      const v = line.raw[i];
      const x = scale.x(point.step);
      const y = scale.y(v);
      const name = word(line);
      const group = svg(
        "g",
        {
          class: "rv-best-mark " + line.cls,
          "data-key": line.key,
          "data-step": point.step,
          "data-value": v,
        },
        chart,
      );
      svg("circle", { class: "rv-best-ring", cx: x.toFixed(2), cy: y.toFixed(2), r: 7 }, group);
      const below = y < 34; // too near the top for the label above the point: below it
      const anchor = x > scale.right - 80 ? "end" : x < scale.left + 80 ? "start" : "middle";
      svg(
        "text",
        {
          class: "rv-best-label",
          x: x.toFixed(2),
          y: (below ? y + 20 : y - 12).toFixed(2),
          "text-anchor": anchor,
        },
        group,
      ).textContent = name + " " + format(v, line.key) + " at step " + point.step;
    });
  };
}

// A step where no line has a value: a dashed band with its reason (an object-reward step
// has components, not one reward), so an empty stretch of the chart explains itself.
function drawGaps(chart, scale, lines, points, reason) {
  if (!lines.length || !lines.some((l) => l.raw.some(finite))) return;
  points.forEach((point, i) => {
    if (lines.some((l) => l.raw[i] !== null)) return;
    const x = scale.x(point.step).toFixed(2);
    const why = reason ? reason(point, lines[0].key) : "";
    const group = svg(
      "g",
      { class: "rv-gap-mark", "data-step": point.step, "data-why": why },
      chart,
    );
    svg("line", { class: "rv-gap-line", x1: x, x2: x, y1: 14, y2: scale.bottom }, group);
    svg(
      "text",
      { class: "rv-gap-label", x: x, y: scale.bottom - 6, "text-anchor": "middle" },
      group,
    ).textContent = "no value";
    svg("title", {}, group).textContent = "Step " + point.step + ": " + (why || "no value");
  });
}
