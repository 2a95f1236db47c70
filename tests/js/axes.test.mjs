// chart-tools.js's arithmetic (lib/axes.js): log ticks at powers of ten, wall-clock ticks at
// round times, the zoomed points, the ?zoom= value and a chart's data as CSV.
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  chartScales,
  csvOf,
  logLabel,
  logTicks,
  parseZoom,
  timeLabel,
  timeTicks,
  zoomIndices,
} from "../../rollouts/static/rollouts/lib/axes.js";
import { PAD } from "../../rollouts/static/rollouts/lib/scale.js";

test("a log axis ticks at every power of ten inside it", () => {
  assert.deepEqual(logTicks(-2.1, 0.3), [0.01, 0.1, 1]);
  assert.deepEqual(logTicks(0, 3), [1, 10, 100, 1000]);
});

test("within one decade a log axis ticks at 1, 2 and 5 times the powers", () => {
  assert.deepEqual(logTicks(Math.log10(1.5), Math.log10(9)), [2, 5]);
  assert.deepEqual(logTicks(-1.9, -0.9), [0.02, 0.05, 0.1]);
});

test("powers of ten read plainly near 1 and as 1eN beyond", () => {
  assert.equal(logLabel(0.001), "0.001");
  assert.equal(logLabel(1000), "1000");
  assert.equal(logLabel(1e-6), "1e-6");
  assert.equal(logLabel(1e7), "1e7");
  assert.equal(logLabel(0.05), "0.05"); // not a power: its value
});

test("the log scale places values by their logarithm", () => {
  const points = [{ step: 0 }, { step: 1 }];
  const s = chartScales(points, [0.01, 1], 400, 300, { log: true });
  assert.equal(s.log, true);
  // 0.1 is halfway between 0.01 and 1 on a log axis
  assert.ok(Math.abs(s.y(0.1) - (s.y(0.01) + s.y(1)) / 2) < 1e-9);
  for (const [value] of s.yMarks(false)) {
    assert.ok(Math.abs(Math.log10(value) - Math.round(Math.log10(value))) < 1e-9, value);
  }
  // no positive value: the linear axis
  const flat = chartScales(points, [-1, 0], 400, 300, { log: true });
  assert.equal(flat.log, undefined);
});

test("the wall-clock axis places the points by their times", () => {
  const points = [
    { step: 0, wall_time: 1000 },
    { step: 1, wall_time: 1100 },
    { step: 2, wall_time: 1600 },
  ];
  const s = chartScales(points, [0, 1], 400, 300, { xOf: (p) => p.wall_time });
  assert.equal(s.x(0), PAD.left);
  assert.equal(s.x(2), 400 - PAD.right);
  assert.ok(Math.abs((s.x(2) - s.x(1)) / (s.x(1) - s.x(0)) - 5) < 1e-9);
  assert.equal(s.xName, "wall clock (local time)");
});

test("time ticks fall on round times with hh:mm labels", () => {
  const start = Date.UTC(2026, 0, 1, 10, 3) / 1000;
  const marks = timeTicks(start, start + 3600, 400); // room for 5 labels
  const step = marks[1][0] - marks[0][0];
  assert.equal(step, 900); // a quarter of an hour: the first round interval that fits
  for (const [t, label] of marks) {
    assert.equal(t % 900, 0);
    assert.match(label, /^\d\d:\d\d$/);
  }
  assert.match(timeLabel(start, 30, 60), /^\d\d:\d\d:\d\d$/); // seconds when ticks are closer
  assert.match(timeLabel(start, 3600, 2 * 86400), /^\d\d-\d\d \d\d:\d\d$/); // a date over days
  assert.equal(timeTicks(start, start, 400).length, 1);
});

test("a zoom keeps the points of its step range", () => {
  const points = [{ step: 0 }, { step: 5 }, { step: 10 }, { step: 15 }];
  assert.deepEqual(zoomIndices(points, [5, 10]), [1, 2]);
  assert.deepEqual(zoomIndices(points, null), [0, 1, 2, 3]);
  assert.deepEqual(parseZoom("5-10"), [5, 10]);
  for (const bad of ["", "10-5", "a-b", "5", "5-5", null]) assert.equal(parseZoom(bad), null);
});

test("the CSV has a row per point: step, wall_time, then a column per line", () => {
  const points = [
    { step: 1, wall_time: 100.5 },
    { step: 2, wall_time: 200 },
  ];
  const lines = [
    { label: "reward", values: [0.5, NaN] },
    { label: 'a "quoted", label', values: [null, 3] },
  ];
  assert.equal(
    csvOf(points, lines),
    'step,wall_time,reward,"a ""quoted"", label"\r\n1,100.5,0.5,\r\n2,200,,3\r\n',
  );
  assert.equal(csvOf([{ step: 3 }], [{ label: "x", values: [1] }]), "step,x\r\n3,1\r\n");
});
