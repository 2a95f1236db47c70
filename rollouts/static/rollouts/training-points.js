// Relax Rollout Viewer: the Training page's kept points and the attempts they belong to.
// A job resumed from a checkpoint is a new process of the same job (an attempt): its points are
// kept beside the earlier attempt's, never over them, so the killed run's curve stays where it
// ended and the resumed run's starts where it resumed. A point is known by (attempt,
// timesteps): one sent again (a JSON line and an SB3 table at the same tick, merged by the
// server) replaces the kept one.
//
//   const kept = createPoints();
//   kept.add(points); kept.setAttempts(list); kept.clear();
//   kept.list(); kept.attempts(); kept.series()  // {xs: [{step}], groups: [{attempt, at}]}
import { finite } from "./lib/numbers.js";

const POINTS_MAX = 5000; // as the server keeps

function attemptOf(point) {
  return finite(point.attempt) ? point.attempt : 0;
}
function compare(a, b) {
  return attemptOf(a) - attemptOf(b) || a.timesteps - b.timesteps;
}

export function createPoints() {
  let kept = []; // in (attempt, timesteps) order
  let listed = []; // the server's `metrics.attempts`

  function addOne(p) {
    if (!p || !finite(p.timesteps)) return;
    let i = kept.length;
    while (i > 0 && compare(kept[i - 1], p) > 0) i -= 1;
    if (i > 0 && compare(kept[i - 1], p) === 0) {
      kept[i - 1] = p; // more metrics, same tick
    } else {
      kept.splice(i, 0, p);
    }
  }

  function add(points) {
    (points || []).forEach(addOne);
    if (kept.length > POINTS_MAX) kept.splice(0, kept.length - POINTS_MAX);
  }

  function setAttempts(list) {
    if (Array.isArray(list)) listed = list.filter((a) => a && finite(a.index));
  }

  // The server's `metrics.attempts`.
  function attempts() {
    return listed;
  }

  // The x positions (every tick any attempt has, in order) and, per attempt with points,
  // its point at each x (or undefined): the chart draws one line per attempt.
  function series() {
    const ticks = {};
    const groups = [];
    const byAttempt = {};
    kept.forEach((p) => {
      ticks[p.timesteps] = true;
      const a = attemptOf(p);
      if (!byAttempt[a]) {
        byAttempt[a] = {};
        groups.push({ attempt: a, at: byAttempt[a] });
      }
      byAttempt[a][p.timesteps] = p;
    });
    const xs = Object.keys(ticks)
      .map(Number)
      .sort((a, b) => a - b);
    return { xs: xs.map((t) => ({ step: t })), groups: groups };
  }

  return {
    add: add,
    setAttempts: setAttempts,
    attempts: attempts,
    series: series,
    list: () => kept,
    clear: () => {
      kept = [];
      listed = [];
    },
  };
}
