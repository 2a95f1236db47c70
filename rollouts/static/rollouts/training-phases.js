// Relax Rollout Viewer: the Training page's phase timeline. Each phase the snapshot lists
// (`progress.phases`: {name, kind (collect, update, other), started_at, seconds (paused time
// left out), paused_seconds}) is a bar on a horizontal time axis, in a lane of its kind (the
// lanes are named in text, and a legend gives each kind's share of the time: colour is never
// the only cue). A phase's pause follows its bar, outlined. Where a resumed attempt's phases
// begin, a dashed line says so. Phases without a known duration (read again from the log by a
// restarted viewer; the last one of a process that was ended) are listed but not drawn to
// scale. The list under the drawing (#rv-train-phases) holds the newest phases as text.
//
//   var timeline = rvTraining.phases({box, svg, legend, note, details, list});
//   timeline.draw(progress, active);
(function () {
  "use strict";

  var LISTED = 24; // the newest phases in the list
  var DRAWN = 200; // the newest timed phases on the axis, at most
  var PHASE_PX = 4; // and at least this much width each (fewer on a narrow screen)
  var KINDS = ["collect", "update", "other"];
  var LANE = 18, GAP = 6, LEFT = 64, RIGHT = 18, TOP = 6, AXIS = 30; // px
  var html = window.rv.element; // shared.js
  var finite = window.rv.finite;
  var T = window.rvTraining = window.rvTraining || {}; // duration: training-metrics.js

  // The server names each phase's kind (progress.py's phase_kind).
  function kindOf(phase) { return KINDS.indexOf(phase.kind) >= 0 ? phase.kind : "other"; }
  function timed(phase) { return finite(phase.started_at) && finite(phase.seconds); }
  function paused(phase) { return finite(phase.paused_seconds) ? phase.paused_seconds : 0; }

  // Tick labels on a time axis: whole seconds under a minute, then minutes and seconds.
  function tickText(seconds) {
    if (seconds < 60) return Math.round(seconds * 10) / 10 + " s";
    return T.duration(seconds);
  }

  function create(el) {
    var svg = window.rvChart.svg; // chart.js
    var last = null; // [progress, active]: drawn again at another width

    function describe(phase) {
      var known = timed(phase);
      return phase.name + " (" + kindOf(phase) + "): " + (known ? T.duration(phase.seconds)
        : "time unknown") + (paused(phase) ? ", paused " + T.duration(paused(phase)) : "");
    }

    function drawList(phases, active) {
      var shown = phases.slice(-LISTED);
      el.list.replaceChildren.apply(el.list, shown.map(function (phase, i) {
        var item = html("li", "rv-phase rv-phase-" + kindOf(phase));
        item.setAttribute("data-phase", phase.name);
        item.setAttribute("data-kind", kindOf(phase));
        if (i === shown.length - 1 && active) item.classList.add("rv-phase-current");
        item.appendChild(html("span", "rv-phase-name", phase.name));
        item.appendChild(html("span", "rv-meta", " " + (timed(phase) ? T.duration(phase.seconds)
          : "time unknown") + (paused(phase) ? " + paused " + T.duration(paused(phase)) : "")));
        return item;
      }));
    }

    // The legend: each kind's name, its share of the timed seconds and the total.
    function drawLegend(drawn) {
      var sums = { collect: 0, update: 0, other: 0 }, pause = 0, busy = 0;
      drawn.forEach(function (p) {
        sums[kindOf(p)] += p.seconds;
        busy += p.seconds;
        pause += paused(p);
      });
      var items = KINDS.filter(function (k) { return sums[k] > 0 || k !== "other"; })
        .map(function (k) {
          var item = html("li", "rv-legend-item rv-phase-key rv-phase-" + k);
          item.setAttribute("data-kind", k);
          item.append(html("span", "rv-phase-swatch"), k + " " + (busy > 0
            ? Math.round((100 * sums[k]) / busy) + " %" : "–") + " (" + T.duration(sums[k]) + ")");
          return item;
        });
      if (pause > 0) {
        var item = html("li", "rv-legend-item rv-phase-key rv-phase-paused");
        item.setAttribute("data-kind", "paused");
        item.append(html("span", "rv-phase-swatch"), "paused " + T.duration(pause) +
          " (not counted in any phase)");
        items.push(item);
      }
      el.legend.replaceChildren.apply(el.legend, items);
      el.legend.hidden = !drawn.length;
      return { busy: busy, pause: pause };
    }

    function drawAxis(drawn, origin, active) {
      var box = el.svg;
      box.replaceChildren();
      el.box.hidden = !drawn.length; // an <svg> takes no `hidden`: its box does
      if (!drawn.length) return;
      var lanes = KINDS.filter(function (k) {
        return k !== "other" || drawn.some(function (p) { return kindOf(p) === k; });
      });
      var width = Math.max(el.box.clientWidth, 320);
      var height = TOP + lanes.length * (LANE + GAP) + AXIS;
      var end = Math.max.apply(null, drawn.map(function (p) {
        return p.started_at + p.seconds + paused(p);
      }));
      var span = Math.max(end - origin, 1e-3), right = width - RIGHT;
      var x = function (t) { return LEFT + ((t - origin) * (right - LEFT)) / span; };
      box.setAttribute("viewBox", "0 0 " + width + " " + height);
      box.setAttribute("height", height);
      var axisY = TOP + lanes.length * (LANE + GAP);
      var grid = svg("g", { "class": "rv-axes" }, box);
      window.rvChart.ticks(0, span, Math.max(2, Math.min(8, Math.floor(width / 110))))
        .forEach(function (t) {
          var at = x(origin + t).toFixed(1);
          svg("line", { "class": "rv-gridline", x1: at, x2: at, y1: TOP, y2: axisY }, grid);
          svg("text", { "class": "rv-tick", x: at, y: axisY + 14, "text-anchor": "middle" }, grid)
            .textContent = tickText(t);
        });
      svg("line", { "class": "rv-axis-line", x1: LEFT, x2: right, y1: axisY, y2: axisY }, grid);
      svg("text", { "class": "rv-axis-label", x: (LEFT + right) / 2, y: height - 2,
        "text-anchor": "middle" }, grid).textContent = "wall time since the first phase shown";
      lanes.forEach(function (k, n) {
        svg("text", { "class": "rv-tick rv-phase-lane", x: LEFT - 6, y: TOP + n * (LANE + GAP) + LANE / 2,
          dy: "0.32em", "text-anchor": "end" }, box).textContent = k;
      });
      drawn.forEach(function (p, i) {
        var lane = lanes.indexOf(kindOf(p)), y = TOP + lane * (LANE + GAP);
        var x0 = x(p.started_at), w = Math.max(x(p.started_at + p.seconds) - x0, 1);
        var group = svg("g", { "class": "rv-phase-bar rv-phase-" + kindOf(p) +
          (active && i === drawn.length - 1 ? " rv-phase-current" : ""), "data-phase": p.name,
          "data-kind": kindOf(p) }, box);
        svg("rect", { "class": "rv-phase-rect", x: x0.toFixed(2), y: y, width: w.toFixed(2),
          height: LANE, rx: 2 }, group);
        if (paused(p) > 0) {
          var px = x0 + w, pw = Math.max(x(p.started_at + p.seconds + paused(p)) - px, 1);
          svg("rect", { "class": "rv-phase-rect-paused", x: px.toFixed(2), y: y + 3,
            width: pw.toFixed(2), height: LANE - 6 }, group);
        }
        svg("title", {}, group).textContent = describe(p);
        var before = drawn[i - 1];
        if (before && finite(p.attempt) && p.attempt !== before.attempt) {
          var at = x(p.started_at).toFixed(2), mark = svg("g", { "class": "rv-phase-attempt",
            "data-attempt": p.attempt }, box);
          svg("line", { x1: at, x2: at, y1: 0, y2: axisY }, mark);
          svg("text", { x: (+at - 3).toFixed(2), y: 10, "text-anchor": "end" }, mark)
            .textContent = "attempt " + (p.attempt + 1);
        }
      });
    }

    function draw(progress, active) {
      last = [progress, active];
      var phases = (progress && progress.phases) || [];
      var width = Math.max(el.box.parentNode.clientWidth - LEFT - RIGHT, 100);
      var known = phases.filter(timed);
      var drawn = known.slice(-Math.min(DRAWN, Math.floor(width / PHASE_PX)));
      var origin = drawn.length ? drawn[0].started_at : null;
      if (drawn.length === known.length && finite(progress.started_at) &&
        progress.started_at <= origin) origin = progress.started_at; // the run's own start
      drawList(phases, active);
      var sums = drawLegend(drawn);
      drawAxis(drawn, origin, active);
      var unknown = phases.length - known.length, said = [];
      if (drawn.length) {
        said.push(T.count(drawn.length) + " phase" + (drawn.length === 1 ? "" : "s") +
          " drawn over " + T.duration(sums.busy + sums.pause) +
          (drawn.length < known.length ? " (the newest of " + T.count(known.length) + ")" : ""));
      }
      if (unknown) {
        said.push(T.count(unknown) + " phase" + (unknown === 1 ? "" : "s") + " without a known " +
          "duration: listed, not drawn to scale");
      }
      el.note.textContent = said.join("; ");
      el.note.hidden = !said.length;
      el.svg.setAttribute("aria-label", "Phase timeline: " + (said.join("; ") || "no phase yet"));
      el.details.hidden = !phases.length;
      if (unknown && !drawn.length) el.details.open = true;
    }

    window.addEventListener("resize", function () { if (last) draw(last[0], last[1]); });
    return { draw: draw };
  }

  T.phases = create;
})();
