// Relax Rollout Viewer: the Training page's kept points and the attempts they belong to.
// A job resumed from a checkpoint is a new process of the same job (an attempt): its points are
// kept beside the earlier attempt's, never over them, so the killed run's curve stays where it
// ended and the resumed run's starts where it resumed. A point is known by (attempt,
// timesteps): one sent again (a JSON line and an SB3 table at the same tick, merged by the
// server) replaces the kept one. Points without `attempt` (an older server) keep the old rule:
// a point at or before the last kept one replaces those from there on.
//
//   var kept = rvTraining.points();
//   kept.add(points); kept.setAttempts(list); kept.clear();
//   kept.list(); kept.attempts(); kept.series()  // {xs: [{step}], groups: [{attempt, at}]}
(function () {
  "use strict";

  var POINTS_MAX = 5000; // as the server keeps
  var finite = window.rv.finite; // shared.js

  function attemptOf(point) { return finite(point.attempt) ? point.attempt : 0; }
  function compare(a, b) {
    return attemptOf(a) - attemptOf(b) || a.timesteps - b.timesteps;
  }

  function create() {
    var kept = []; // in (attempt, timesteps) order
    var listed = []; // the server's `metrics.attempts`, when it sends them

    function addOne(p) {
      if (!p || !finite(p.timesteps)) return;
      if (!finite(p.attempt)) { // an older server: one attempt, a redone tick replaces
        while (kept.length && kept[kept.length - 1].timesteps >= p.timesteps) kept.pop();
        kept.push(p);
        return;
      }
      var i = kept.length;
      while (i > 0 && compare(kept[i - 1], p) > 0) i -= 1;
      if (i > 0 && compare(kept[i - 1], p) === 0) kept[i - 1] = p; // more metrics, same tick
      else kept.splice(i, 0, p);
    }

    function add(points) {
      (points || []).forEach(addOne);
      if (kept.length > POINTS_MAX) kept.splice(0, kept.length - POINTS_MAX);
    }

    function setAttempts(list) {
      if (Array.isArray(list)) listed = list.filter(function (a) { return a && finite(a.index); });
    }

    // The attempts: the server's list, else one per attempt number the points carry.
    function attempts() {
      if (listed.length) return listed;
      var seen = {};
      return kept.filter(function (p) {
        var a = attemptOf(p);
        if (seen[a]) return false;
        seen[a] = true;
        return true;
      }).map(function (p) {
        return { index: attemptOf(p), started_at: null, start_timesteps: p.timesteps,
          resumed_from: null };
      });
    }

    // The x positions (every tick any attempt has, in order) and, per attempt with points,
    // its point at each x (or undefined): the chart draws one line per attempt.
    function series() {
      var ticks = {}, groups = [], byAttempt = {};
      kept.forEach(function (p) {
        ticks[p.timesteps] = true;
        var a = attemptOf(p);
        if (!byAttempt[a]) {
          byAttempt[a] = {};
          groups.push({ attempt: a, at: byAttempt[a] });
        }
        byAttempt[a][p.timesteps] = p;
      });
      var xs = Object.keys(ticks).map(Number).sort(function (a, b) { return a - b; });
      return { xs: xs.map(function (t) { return { step: t }; }), groups: groups };
    }

    return {
      add: add, setAttempts: setAttempts, attempts: attempts, series: series,
      list: function () { return kept; },
      clear: function () { kept = []; listed = []; },
    };
  }

  window.rvTraining = window.rvTraining || {};
  window.rvTraining.points = create;
})();
