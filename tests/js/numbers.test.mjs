// Numbers as the pages print them (lib/numbers.js): the same rules the server's templates use,
// so a value reads the same in the HTML and in what the scripts draw.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import {
  finite,
  formatCount,
  formatDelta,
  formatDuration,
  formatNumber,
  formatShare,
  formatShareDelta,
  formatUnit,
} from "../../rollouts/static/rollouts/lib/numbers.js";

// value -> text, the table tests/unit/test_number_rule.py checks against the server too
const CASES = JSON.parse(readFileSync(new URL("./numbers.cases.json", import.meta.url), "utf8"));

test("only finite numbers count as values", () => {
  assert.equal(finite(0), true);
  assert.equal(finite(-1.5), true);
  for (const missing of [NaN, Infinity, -Infinity, null, undefined, "3", [1]]) {
    assert.equal(finite(missing), false, String(missing));
  }
});

test("every value of the shared table prints as listed (the server checks the same table)", () => {
  const formats = {
    number: formatNumber,
    delta: formatDelta,
    share: formatShare,
    share_delta: formatShareDelta,
  };
  for (const [kind, format] of Object.entries(formats)) {
    assert.ok(CASES[kind].length > 3, kind);
    for (const [value, text] of CASES[kind]) assert.equal(format(value), text, `${kind} ${value}`);
  }
  for (const [value, unit, text] of CASES.unit) assert.equal(formatUnit(value, unit), text);
});

test("-0 prints as 0, and a unit needs a number", () => {
  assert.equal(formatNumber(-0), "0");
  assert.equal(formatUnit(NaN, "timesteps/s"), "–");
});

test("a missing value prints as an en dash", () => {
  for (const format of [formatNumber, formatDelta, formatShare, formatShareDelta]) {
    assert.equal(format(NaN), "–");
    assert.equal(format(null), "–");
  }
  assert.equal(formatCount(undefined), "–");
  assert.equal(formatDuration(null), "–");
});

test("counts have thousands separators", () => {
  assert.equal(formatCount(12345), "12,345");
  assert.equal(formatCount(1234.6), "1,235");
  assert.equal(formatCount(7), "7");
});

test("durations read as seconds, then minutes, then hours", () => {
  assert.equal(formatDuration(12.34), "12.3 s");
  assert.equal(formatDuration(0), "0.0 s");
  assert.equal(formatDuration(60), "1m 00s");
  assert.equal(formatDuration(245), "4m 05s");
  assert.equal(formatDuration(3723), "1h 02m 03s");
  assert.equal(formatDuration(36000), "10h 00m 00s");
});
