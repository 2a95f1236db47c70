// A run's colour from its name (lib/run-colour.js): FNV-1a over UTF-8, modulo the palette,
// checked against the list the Python twin (presentation/runcolour.py) is checked against.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import {
  fnv1a32,
  RUN_COLOURS,
  runColourClass,
  runColourIndex,
} from "../../rollouts/static/rollouts/lib/run-colour.js";

const shared = JSON.parse(
  readFileSync(new URL("../support/run-colours.json", import.meta.url), "utf-8"),
);

test("the palette has as many colours as the shared list says", () => {
  assert.equal(RUN_COLOURS, shared.palette);
});

test("the hash is FNV-1a 32 over UTF-8 bytes (published vectors, then non-ASCII names)", () => {
  for (const row of shared.names) assert.equal(fnv1a32(row.name), row.fnv1a32, row.name);
});

test("each name gets the index the Python twin gives it", () => {
  for (const row of shared.names) assert.equal(runColourIndex(row.name), row.index, row.name);
});

test("the class names the index, and the same name always gets the same class", () => {
  assert.equal(runColourClass("beta"), "rv-run-colour-" + runColourIndex("beta"));
  assert.equal(runColourClass("beta"), runColourClass("beta"));
  assert.notEqual(runColourIndex("alpha"), runColourIndex("beta"));
});
