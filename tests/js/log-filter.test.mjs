// Which lines the Training page's log shows (lib/log-filter.js), and which go when it is full.
import assert from "node:assert/strict";
import { test } from "node:test";

import { isShown, linesToDrop } from "../../rollouts/static/rollouts/lib/log-filter.js";

const ALL = { word: "", errorsOnly: false, progress: true };
const line = (kind, text = "a line") => ({ kind, text });

test("with no filter every line shows", () => {
  for (const kind of ["stdout", "stderr", "progress", "table", "error"]) {
    assert.equal(isShown(line(kind), ALL), true, kind);
  }
});

test("errors only keeps stderr and error lines", () => {
  const filter = { ...ALL, errorsOnly: true };
  assert.equal(isShown(line("stderr"), filter), true);
  assert.equal(isShown(line("error"), filter), true);
  assert.equal(isShown(line("stdout"), filter), false);
  assert.equal(isShown(line("table"), filter), false);
});

test("progress-JSON lines can be hidden", () => {
  const filter = { ...ALL, progress: false };
  assert.equal(isShown(line("progress"), filter), false);
  assert.equal(isShown(line("stdout"), filter), true);
});

test("a keyword matches anywhere in the text, whatever its case and spaces", () => {
  const filter = { ...ALL, word: "  LOSS " };
  assert.equal(isShown(line("stdout", "policy_loss 0.31"), filter), true);
  assert.equal(isShown(line("stdout", "reward 1.0"), filter), false);
});

test("filters add up", () => {
  const filter = { word: "nan", errorsOnly: true, progress: true };
  assert.equal(isShown(line("stderr", "loss is NaN"), filter), true);
  assert.equal(isShown(line("stdout", "loss is NaN"), filter), false);
  assert.equal(isShown(line("stderr", "CUDA out of memory"), filter), false);
});

test("a marker where an attempt began shows whatever the filter", () => {
  const marker = { kind: "marker", text: "— the job resumed —", marker: true };
  assert.equal(isShown(marker, { word: "zzz", errorsOnly: true, progress: false }), true);
});

test("a full log drops its oldest numbered lines, and a marker before them", () => {
  const n = (i) => ({ n: i });
  const marker = { marker: true };
  assert.equal(linesToDrop([n(1), n(2)], 2), 0);
  assert.equal(linesToDrop([n(1), n(2), n(3)], 2), 1);
  // A marker ahead of the dropped line goes with it; one after stays with the kept lines.
  assert.equal(linesToDrop([marker, n(1), n(2), n(3)], 2), 2);
  assert.equal(linesToDrop([n(1), marker, n(2), n(3)], 2), 1);
  // Markers do not count against the limit.
  assert.equal(linesToDrop([n(1), marker, n(2)], 2), 0);
});
