// The Training page's kept points (training-points.js): ordered by attempt and timesteps, a
// point sent again replaces the kept one, and each attempt is its own line.
import assert from "node:assert/strict";
import { test } from "node:test";

import { createPoints } from "../../rollouts/static/rollouts/training-points.js";

const point = (timesteps, attempt, metrics = {}) => ({ timesteps, attempt, metrics });

test("points are kept in (attempt, timesteps) order whatever order they come in", () => {
  const kept = createPoints();
  kept.add([point(200, 0), point(100, 0), point(50, 1), point(300, 0)]);
  assert.deepEqual(
    kept.list().map((p) => [p.attempt, p.timesteps]),
    [
      [0, 100],
      [0, 200],
      [0, 300],
      [1, 50],
    ],
  );
});

test("a point sent again for the same attempt and tick replaces the kept one", () => {
  const kept = createPoints();
  kept.add([point(100, 0, { loss: 1 })]);
  kept.add([point(100, 0, { loss: 1, reward: 2 })]);
  assert.equal(kept.list().length, 1);
  assert.deepEqual(kept.list()[0].metrics, { loss: 1, reward: 2 });
});

test("a point without a number of timesteps is left out; no attempt means the first", () => {
  const kept = createPoints();
  kept.add([{ timesteps: null }, null, { timesteps: 10 }]);
  assert.deepEqual(
    kept.series().groups.map((g) => g.attempt),
    [0],
  );
});

test("the series has every tick any attempt has, and one group per attempt", () => {
  const kept = createPoints();
  kept.add([point(100, 0), point(200, 0), point(150, 1), point(250, 1)]);
  const { xs, groups } = kept.series();
  assert.deepEqual(
    xs.map((x) => x.step),
    [100, 150, 200, 250],
  );
  assert.deepEqual(
    groups.map((g) => [g.attempt, Object.keys(g.at).map(Number)]),
    [
      [0, [100, 200]],
      [1, [150, 250]],
    ],
  );
});

test("the attempts listed by the server are kept when they have an index", () => {
  const kept = createPoints();
  kept.setAttempts([{ index: 0 }, { index: 1, start_timesteps: 150 }, {}, null]);
  assert.deepEqual(
    kept.attempts().map((a) => a.index),
    [0, 1],
  );
  kept.setAttempts("not a list"); // ignored
  assert.equal(kept.attempts().length, 2);
  kept.clear();
  assert.deepEqual([kept.list(), kept.attempts()], [[], []]);
});
