// Relax Rollout Viewer: the arithmetic of chart-tools.js (pure functions, no DOM; tests/js
// checks them under Node): a log value axis with ticks at powers of ten, a wall-clock step axis
// with ticks at round times, the points inside a zoomed step range, and a chart's data as CSV.

import { finite } from "./numbers.js";
import { PAD, scales, stepTicks, valueTicks } from "./scale.js";

const X_LABEL_PX = 80; // time labels at least this far apart (as scale.js's step labels)
// Round time intervals for the wall-clock ticks, seconds.
const TIME_STEPS = [
  1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400, 172800,
  604800, 2592000,
];
const DAY_S = 86400;

// A power of ten as a tick label: plain from 0.0001 to 10000, "1e-5" or "1e6" beyond.
export function logLabel(value) {
  const power = Math.round(Math.log10(value));
  if (Math.abs(power - Math.log10(value)) > 1e-9) return String(+value.toPrecision(3));
  if (power >= -4 && power <= 4) return String(+(10 ** power).toPrecision(12));
  return "1e" + power;
}

// Ticks of a log axis between 10^low and 10^high (low, high: exponents): every power of ten
// inside when there are two or more, else 1, 2 and 5 times the powers of ten, else the ends.
export function logTicks(low, high) {
  const powers = [];
  for (let k = Math.ceil(low - 1e-9); k <= high + 1e-9; k += 1) powers.push(10 ** k);
  if (powers.length >= 2) return powers.map((v) => +v.toPrecision(12));
  const out = [];
  for (let k = Math.floor(low) - 1; k <= Math.ceil(high); k += 1) {
    [1, 2, 5].forEach((m) => {
      const v = m * 10 ** k;
      const e = Math.log10(v);
      if (e >= low - 1e-9 && e <= high + 1e-9) out.push(+v.toPrecision(12));
    });
  }
  return out.length >= 2 ? out : [10 ** low, 10 ** high].map((v) => +v.toPrecision(3));
}

function pad2(n) {
  return String(n).padStart(2, "0");
}
// A wall time (seconds since the epoch) as the axis says it, in local time: "14:05" (with
// seconds when the ticks are less than a minute apart), with the date ("12-02 14:05") when the
// axis spans a day or more.
export function timeLabel(seconds, interval, span) {
  const d = new Date(seconds * 1000);
  let text = pad2(d.getHours()) + ":" + pad2(d.getMinutes());
  if (interval < 60) text += ":" + pad2(d.getSeconds());
  if (span >= DAY_S) text = pad2(d.getMonth() + 1) + "-" + pad2(d.getDate()) + " " + text;
  return text;
}

// Round times between t0 and t1 (seconds), no closer than the width has room for, as
// [seconds, label].
export function timeTicks(t0, t1, widthPx) {
  if (!(t1 > t0)) return [[t0, timeLabel(t0, 1, 0)]];
  const room = Math.max(2, Math.floor(widthPx / X_LABEL_PX));
  const span = t1 - t0;
  const interval = TIME_STEPS.find((s) => span / s <= room) || TIME_STEPS[TIME_STEPS.length - 1];
  const out = [];
  for (let t = Math.ceil(t0 / interval) * interval; t <= t1; t += interval) {
    out.push([t, timeLabel(t, interval, span)]);
  }
  return out;
}

// The chart's scales (scale.js's, with the marks chart.js draws) in a view:
//   log: values on a log axis (only positive ones: the caller leaves out the others);
//   xOf: a point's x as a time (wall clock) instead of its step.
// Marks: yMarks(share) -> [[value, label]], xMarks() -> [[px, label]]; xName: the x axis' name.
export function chartScales(points, values, width, height, view) {
  const s = scales(points, values, width, height);
  s.yMarks = (share) => valueTicks(s.y0, s.y1, share);
  s.xMarks = () => stepTicks(s.x0, s.x1, s.right - s.left).map((t) => [s.x(t), String(t)]);
  const positive = values.filter((v) => v > 0);
  if (view.log && positive.length) {
    const lo = Math.log10(Math.min(...positive));
    const hi = Math.log10(Math.max(...positive));
    const pad = hi > lo ? (hi - lo) * 0.08 : 0.5;
    const a = lo - pad;
    const b = hi + pad;
    const top = PAD.top;
    s.y0 = 10 ** a;
    s.y1 = 10 ** b;
    s.y = (v) => s.bottom - ((Math.log10(v) - a) * (s.bottom - top)) / (b - a);
    s.yMarks = () => logTicks(a, b).map((v) => [v, logLabel(v)]);
    s.log = true;
  }
  if (view.xOf && points.length) {
    const at = new Map(points.map((p) => [p.step, view.xOf(p)]));
    const times = [...at.values()];
    const t0 = Math.min(...times);
    const t1 = Math.max(...times);
    const px = (t) =>
      t1 > t0 ? s.left + ((t - t0) * (s.right - s.left)) / (t1 - t0) : (s.left + s.right) / 2;
    s.x = (step) => px(at.get(step));
    s.xMarks = () => timeTicks(t0, t1, s.right - s.left).map((t) => [px(t[0]), t[1]]);
    s.xName = "wall clock (local time)";
  }
  return s;
}

// The indices of the points inside a zoomed step range [from, to] (every index without one).
export function zoomIndices(points, range) {
  const all = points.map((_, i) => i);
  if (!range) return all;
  return all.filter((i) => points[i].step >= range[0] && points[i].step <= range[1]);
}

// "10-20" (a ?zoom= value) as [10, 20], or null.
export function parseZoom(text) {
  const match = /^(-?\d+)-(-?\d+)$/.exec(text || "");
  if (!match) return null;
  const range = [Number(match[1]), Number(match[2])];
  return range[0] < range[1] ? range : null;
}

function csvField(value) {
  const text = String(value);
  return /[",\n\r]/.test(text) ? '"' + text.replace(/"/g, '""') + '"' : text;
}
// A chart's data as CSV: a row per point with its step, its wall_time when any point has one,
// and one column per line (its label; empty where the line has no value).
export function csvOf(points, lines) {
  const timed = points.some((p) => finite(p.wall_time));
  const head = ["step"].concat(
    timed ? ["wall_time"] : [],
    lines.map((l) => l.label),
  );
  const rows = points.map((p, i) => {
    const cells = [p.step].concat(
      timed ? [finite(p.wall_time) ? p.wall_time : ""] : [],
      lines.map((l) => (finite(l.values[i]) ? l.values[i] : "")),
    );
    return cells.map(csvField).join(",");
  });
  return [head.map(csvField).join(",")].concat(rows).join("\r\n") + "\r\n";
}
