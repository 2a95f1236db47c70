// Relax Rollout Viewer: the arithmetic of a line chart: smoothing, round tick values, the
// scales from steps and values to pixels, and the SVG path through a line. Pure functions (no
// DOM): chart.js draws with them, and tests/js checks them under Node.

import { finite, formatNumber, formatShare } from "./numbers.js";

export const PAD = { left: 64, right: 18, top: 14, bottom: 38 }; // chart margins, px
const Y_TICKS = 5; // about this many value ticks
const X_LABEL_PX = 80; // step labels at least this far apart
const X_TICKS_MAX = 8;

// TensorBoard's debiased exponential moving average: missing values are skipped (and stay
// missing), and the early points are not dragged towards 0.
export function ema(values, weight) {
  let last = 0;
  let count = 0;
  return values.map((v) => {
    if (!finite(v)) return null;
    last = last * weight + (1 - weight) * v;
    count += 1;
    return last / (1 - weight ** count);
  });
}

// About `count` round tick values covering [low, high], as d3 picks them: steps of 1, 2 or 5
// times a power of ten.
export function ticks(low, high, count) {
  if (!(high > low)) return [low];
  const raw = (high - low) / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  const error = raw / power;
  let unit = power;
  if (error >= 7.07) unit = power * 10;
  else if (error >= 3.16) unit = power * 5;
  else if (error >= 1.41) unit = power * 2;
  const out = [];
  for (let t = Math.ceil(low / unit) * unit; t <= high + unit * 1e-9; t += unit) {
    out.push(+t.toPrecision(12));
  }
  return out;
}

// The value axis' ticks as [value, label]: as many decimals as the tick spacing needs; shares
// (0..1) as percentages. A lone tick (a flat line) reads as any number does.
export function valueTicks(low, high, share) {
  const values = ticks(low, high, Y_TICKS);
  if (values.length < 2) return values.map((t) => [t, share ? formatShare(t) : formatNumber(t)]);
  const unit = (values[1] - values[0]) * (share ? 100 : 1);
  const digits = Math.max(0, -Math.floor(Math.log10(unit) + 1e-9));
  return values.map((t) => [t, share ? `${(100 * t).toFixed(digits)} %` : t.toFixed(digits)]);
}

// The step axis' ticks: whole steps only, no more than the width has room for.
export function stepTicks(x0, x1, widthPx) {
  const room = Math.max(2, Math.floor(widthPx / X_LABEL_PX));
  return ticks(x0, x1, Math.min(X_TICKS_MAX, room, Math.max(x1 - x0, 1))).filter(Number.isInteger);
}

// Step -> x and value -> y for a chart `width` x `height` px, from the points' steps and the
// shown values (`values`: every finite value drawn, reference lines included), with 8 % of
// headroom above and below (a flat line gets 10 % of its value, or 0.5).
export function scales(points, values, width, height) {
  const x0 = points[0].step;
  const x1 = points[points.length - 1].step;
  const y0 = values.length ? values.reduce((a, b) => Math.min(a, b)) : 0;
  const y1 = values.length ? values.reduce((a, b) => Math.max(a, b)) : 1;
  const pad = y1 > y0 ? (y1 - y0) * 0.08 : Math.abs(y0) * 0.1 || 0.5;
  const left = PAD.left;
  const right = width - PAD.right;
  const top = PAD.top;
  const bottom = height - PAD.bottom;
  return {
    x0,
    x1,
    y0: y0 - pad,
    y1: y1 + pad,
    left,
    right,
    bottom,
    x: (step) => (x1 > x0 ? left + ((step - x0) * (right - left)) / (x1 - x0) : (left + right) / 2),
    y: (v) => bottom - ((v - (y0 - pad)) * (bottom - top)) / (y1 - y0 + 2 * pad),
  };
}

// The SVG path through the non-null values, broken where a step has none (a gap, never a 0);
// `connect`: the line runs on over the missing values instead.
export function pathOf(values, points, scale, connect) {
  let d = "";
  let pen = "M";
  values.forEach((v, i) => {
    if (v === null) {
      pen = connect && d ? pen : "M";
      return;
    }
    d += `${pen + scale.x(points[i].step).toFixed(2)},${scale.y(v).toFixed(2)}`;
    pen = "L";
  });
  return d;
}

// A sparkline's path in a `width` x `height` box (2 px in from the sides, 3 px from the top
// and bottom); a single value is a short dash in the middle.
export function sparkPath(values, width, height) {
  const low = Math.min(...values);
  const high = Math.max(...values);
  const d = values
    .map((v, i) => {
      const x = values.length > 1 ? 2 + (i * (width - 4)) / (values.length - 1) : width / 2;
      const y = high > low ? height - 3 - ((v - low) / (high - low)) * (height - 6) : height / 2;
      return `${(i ? "L" : "M") + x.toFixed(1)},${y.toFixed(1)}`;
    })
    .join("");
  return d + (values.length === 1 ? "h1" : "");
}
