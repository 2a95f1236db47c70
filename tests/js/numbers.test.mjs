// Numbers as the pages print them (lib/numbers.js): the same rules the server's templates use,
// so a value reads the same in the HTML and in what the scripts draw.
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  finite,
  formatCount,
  formatDelta,
  formatDuration,
  formatNumber,
  formatRate,
  formatShare,
  formatShareDelta,
} from "../../rollouts/static/rollouts/lib/numbers.js";

test("only finite numbers count as values", () => {
  assert.equal(finite(0), true);
  assert.equal(finite(-1.5), true);
  for (const missing of [NaN, Infinity, -Infinity, null, undefined, "3", [1]]) {
    assert.equal(finite(missing), false, String(missing));
  }
});

test("ints print plain and floats to four decimals", () => {
  assert.equal(formatNumber(3), "3");
  assert.equal(formatNumber(-120), "-120");
  assert.equal(formatNumber(0.5), "0.5000");
  assert.equal(formatNumber(-0.25), "-0.2500");
  assert.equal(formatNumber(1.23456), "1.2346");
});

test("tiny and huge floats print in exponent form with a two-digit exponent", () => {
  assert.equal(formatNumber(0.0001234), "1.234e-04");
  assert.equal(formatNumber(1234567.8), "1.235e+06");
  assert.equal(formatNumber(-0.00005), "-5.000e-05");
  assert.equal(formatNumber(1.5e-12), "1.500e-12");
  // The edges: 0.001 is the smallest size printed with decimals, 1e6 the first in exponents.
  assert.equal(formatNumber(0.001), "0.0010");
  assert.equal(formatNumber(999999.5), "999999.5000");
});

test("a missing value prints as an en dash", () => {
  for (const format of [formatNumber, formatDelta, formatShare, formatShareDelta]) {
    assert.equal(format(NaN), "–");
    assert.equal(format(null), "–");
  }
  assert.equal(formatCount(undefined), "–");
  assert.equal(formatRate(Infinity), "–");
  assert.equal(formatDuration(null), "–");
});

test("a change carries its sign, and no change reads as ±", () => {
  assert.equal(formatDelta(0.5), "+0.5000");
  assert.equal(formatDelta(-2), "-2");
  assert.equal(formatDelta(0), "±0");
  assert.equal(formatDelta(-0.00002), "-2.000e-05");
});

test("shares print as percentages and their changes in percentage points", () => {
  assert.equal(formatShare(0.125), "12.5 %");
  assert.equal(formatShare(1), "100.0 %");
  assert.equal(formatShare(0), "0.0 %");
  assert.equal(formatShareDelta(0.05), "+5.0 pp");
  assert.equal(formatShareDelta(-0.125), "-12.5 pp");
  assert.equal(formatShareDelta(0), "±0.0 pp");
});

test("counts and rates have thousands separators", () => {
  assert.equal(formatCount(12345), "12,345");
  assert.equal(formatCount(1234.6), "1,235");
  assert.equal(formatCount(7), "7");
  assert.equal(formatRate(1234.5), "1,234.5");
  assert.equal(formatRate(2), "2.0");
});

test("durations read as seconds, then minutes, then hours", () => {
  assert.equal(formatDuration(12.34), "12.3 s");
  assert.equal(formatDuration(0), "0.0 s");
  assert.equal(formatDuration(60), "1m 00s");
  assert.equal(formatDuration(245), "4m 05s");
  assert.equal(formatDuration(3723), "1h 02m 03s");
  assert.equal(formatDuration(36000), "10h 00m 00s");
});
