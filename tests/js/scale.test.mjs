// A line chart's arithmetic (lib/scale.js): round ticks, the value axis' labels, the scales
// with their headroom, smoothing, and the paths that break at a gap.
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  ema,
  PAD,
  pathOf,
  scales,
  sparkPath,
  stepTicks,
  ticks,
  valueTicks,
} from "../../rollouts/static/rollouts/lib/scale.js";

test("ticks step by 1, 2 or 5 times a power of ten", () => {
  assert.deepEqual(ticks(0, 1, 5), [0, 0.2, 0.4, 0.6, 0.8, 1]);
  assert.deepEqual(ticks(0, 100, 5), [0, 20, 40, 60, 80, 100]);
  assert.deepEqual(ticks(-3, 7, 4), [-2, 0, 2, 4, 6]); // 2.5 a tick rounds to 2
  assert.deepEqual(ticks(0, 7, 1), [0, 5]); // 7 a tick rounds to 5
  assert.deepEqual(ticks(0, 80, 1), [0]); // 80 a tick rounds to 100
});

test("ticks start at the first round value inside the range, free of float noise", () => {
  // 0.2 * 3 is 0.6000000000000001 in floating point: the tick is 0.6.
  assert.deepEqual(ticks(0.13, 0.87, 5), [0.2, 0.4, 0.6, 0.8]);
  assert.deepEqual(ticks(1000.5, 1003.5, 3), [1001, 1002, 1003]);
});

test("an empty or inverted range has one tick", () => {
  assert.deepEqual(ticks(5, 5, 5), [5]);
  assert.deepEqual(ticks(3, 1, 5), [3]);
});

test("value labels have as many decimals as the tick spacing needs", () => {
  assert.deepEqual(
    valueTicks(0, 1, false).map((t) => t[1]),
    ["0.0", "0.2", "0.4", "0.6", "0.8", "1.0"],
  );
  assert.deepEqual(
    valueTicks(0, 100, false).map((t) => t[1]),
    ["0", "20", "40", "60", "80", "100"],
  );
  assert.deepEqual(
    valueTicks(0, 0.05, false).map((t) => t[1]),
    ["0.00", "0.01", "0.02", "0.03", "0.04", "0.05"],
  );
  // One tick (a flat line): as any number reads (lib/numbers.js), not padded with zeros.
  assert.deepEqual(valueTicks(5, 5, false), [[5, "5"]]);
  assert.deepEqual(valueTicks(0.123456, 0.123456, false), [[0.123456, "0.1235"]]);
});

test("shares label their ticks as percentages", () => {
  assert.deepEqual(
    valueTicks(0, 1, true).map((t) => t[1]),
    ["0 %", "20 %", "40 %", "60 %", "80 %", "100 %"],
  );
  assert.deepEqual(
    valueTicks(0, 0.05, true).map((t) => t[1]),
    ["0 %", "1 %", "2 %", "3 %", "4 %", "5 %"],
  );
});

test("step ticks are whole steps, no closer than the width has room for", () => {
  assert.deepEqual(stepTicks(0, 10, 318), [0, 5, 10]); // room for 3 labels
  assert.deepEqual(stepTicks(0, 3, 800), [0, 1, 2, 3]); // never more ticks than steps
  // Room for 25 labels, but about 8 asked for at most: 125 a tick rounds to 100 (25 would
  // have given 50, and 21 ticks).
  const wide = stepTicks(0, 1000, 2000);
  assert.equal(wide.length, 11);
  assert.equal(wide[1], 100);
});

test("the scales map the steps across and the values up, with 8 % headroom", () => {
  const points = [{ step: 0 }, { step: 5 }, { step: 10 }];
  const s = scales(points, [0, 1], 400, 300);
  assert.equal(s.y0, -0.08);
  assert.equal(s.y1, 1.08);
  assert.equal(s.x(0), PAD.left);
  assert.equal(s.x(10), 400 - PAD.right);
  assert.equal(s.x(5), (PAD.left + 400 - PAD.right) / 2);
  assert.equal(s.y(-0.08), 300 - PAD.bottom); // the padded bottom value sits on the axis
  assert.ok(Math.abs(s.y(1.08) - PAD.top) < 1e-9);
  assert.ok(Math.abs(s.y(0.5) - (PAD.top + 300 - PAD.bottom) / 2) < 1e-9);
});

test("a flat line gets headroom of a tenth of its value, or of 0.5 at zero", () => {
  const points = [{ step: 1 }, { step: 2 }];
  const flat = scales(points, [2, 2], 400, 300);
  assert.ok(Math.abs(flat.y0 - 1.8) < 1e-12 && Math.abs(flat.y1 - 2.2) < 1e-12);
  const zero = scales(points, [0, 0], 400, 300);
  assert.deepEqual([zero.y0, zero.y1], [-0.5, 0.5]);
  const none = scales(points, [], 400, 300); // no value at all: 0 to 1
  assert.deepEqual([none.y0, none.y1], [-0.08, 1.08]);
});

test("a single step is drawn in the middle", () => {
  const s = scales([{ step: 3 }], [1, 4], 400, 300);
  assert.equal(s.x(3), (PAD.left + 400 - PAD.right) / 2);
});

test("the smoothing is TensorBoard's debiased moving average", () => {
  assert.deepEqual(ema([1, 5, 3], 0), [1, 5, 3]); // weight 0: the raw values
  assert.deepEqual(ema([2, 2, 2], 0.9), [2, 2, 2]); // debiased: a constant stays put
  // Plain EMA would start at 0.5 * 10 = 5; debiased, 5 / (1 - 0.25).
  const [first, second] = ema([0, 10], 0.5);
  assert.equal(first, 0);
  assert.ok(Math.abs(second - 20 / 3) < 1e-12);
});

test("the smoothing skips missing values and keeps them missing", () => {
  assert.deepEqual(ema([NaN, 4, null, 4], 0.5), [null, 4, null, 4]);
});

test("a path breaks at a missing value unless the line connects over it", () => {
  const points = [{ step: 0 }, { step: 1 }, { step: 2 }];
  const scale = { x: (step) => step * 10, y: (v) => v * 100 };
  assert.equal(pathOf([0, null, 1], points, scale, false), "M0.00,0.00M20.00,100.00");
  assert.equal(pathOf([0, null, 1], points, scale, true), "M0.00,0.00L20.00,100.00");
  // Nothing drawn yet: a line that connects still starts with a move.
  assert.equal(pathOf([null, 1, 2], points, scale, true), "M10.00,100.00L20.00,200.00");
});

test("a sparkline spans its box, and a single value is a dash in the middle", () => {
  assert.equal(sparkPath([0, 1], 160, 36), "M2.0,33.0L158.0,3.0");
  assert.equal(sparkPath([1, 1], 160, 36), "M2.0,18.0L158.0,18.0");
  assert.equal(sparkPath([5], 160, 36), "M80.0,18.0h1");
});
