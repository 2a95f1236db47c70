// The convergence reading's table (reading.js): each number the reading compared, the rule it
// was held against, and whether it holds.
import assert from "node:assert/strict";
import { test } from "node:test";

import { readingRows, verdictOf } from "../../rollouts/static/rollouts/reading.js";

const THRESHOLDS = { min_steps: 5, window: 10, plateau_cv: 0.05, plateau_range: 0.1, kl_max: 0.05 };
const text = (v) => String(v);

test("each rule says whether its number holds", () => {
  const numbers = { steps: 12, shift: -0.01, noise: 0.02, cv: 0.2, slope: 0.3 };
  const rows = readingRows(numbers, THRESHOLDS, text);
  const holds = Object.fromEntries(rows.map((row) => [row[0], row[4]]));
  assert.deepEqual(holds, { steps: true, shift: true, cv: false, slope: false });
  const shift = rows.find((row) => row[0] === "shift");
  assert.deepEqual(shift.slice(1, 4), [
    "shift between the halves",
    "noise 0.02",
    "plateau needs |shift| ≤ noise",
  ]);
});

test("a missing number does not hold, and rows appear only for numbers given", () => {
  const rows = readingRows({ steps: 3, cv: null }, THRESHOLDS, text);
  assert.deepEqual(
    rows.map((row) => [row[0], row[4]]),
    [
      ["steps", false],
      ["cv", false],
    ],
  );
});

test("a number no rule names is still listed, without a rule; noise is not a row", () => {
  const rows = readingRows({ level: 0.7, noise: 0.1, episodes: 40 }, THRESHOLDS, text);
  assert.deepEqual(rows, [
    ["level", "mean over the window", "", "", null],
    ["episodes", "episodes", "", "", null],
  ]);
});

test("the verdict drawn is the server's: its label, tone and why, never re-decided", () => {
  // A rising curve the server judged bad (a failed job): the page draws bad, not green.
  const reading = {
    reading: "rising",
    why: "slope +0.1",
    verdict: { state: "failed", label: "failed", tone: "bad", why: "the job failed" },
  };
  assert.deepEqual(verdictOf(reading), {
    label: "failed",
    tone: "bad",
    why: "the job failed",
    className: "rv-learning rv-learning-bad",
  });
});

test("a reading without a verdict, or with an unknown tone, is drawn neutral by its name", () => {
  assert.deepEqual(verdictOf({ reading: "rising", why: "w" }), {
    label: "rising",
    tone: "neutral",
    why: "w",
    className: "rv-learning rv-learning-neutral",
  });
  const odd = verdictOf({ reading: "x", verdict: { label: "x", tone: "green", why: "" } });
  assert.equal(odd.className, "rv-learning rv-learning-neutral");
});
