// Relax Rollout Viewer: the Training page's phase timeline. Each phase the snapshot lists
// (`progress.phases`: {name, kind (collect, update, other), started_at, seconds (paused time
// left out), paused_seconds}) is a bar on a horizontal time axis, in a lane of its kind (the
// lanes are named in text, and a legend gives each kind's share of the time: colour is never
// the only cue). A phase's pause follows its bar, outlined. Where a resumed attempt's phases
// begin, a dashed line says so. Phases without a known duration (read again from the log by a
// restarted viewer; the last one of a process that was ended) are listed but not drawn to
// scale. The list under the drawing (#rv-train-phases) holds the newest phases as text.
//
//   const timeline = createPhases({box, svg, legend, note, details, list});
//   timeline.draw(progress, active);
import { element as html, svg } from "./lib/dom.js";
import { finite, formatCount, formatDuration } from "./lib/numbers.js";
import { ticks } from "./lib/scale.js";

const LISTED = 24; // the newest phases in the list
const DRAWN = 200; // the newest timed phases on the axis, at most
const PHASE_PX = 4; // and at least this much width each (fewer on a narrow screen)
const KINDS = ["collect", "update", "other"];
const LANE = 18;
const GAP = 6;
const LEFT = 64;
const RIGHT = 18;
const TOP = 6;
const AXIS = 30; // px

// The server names each phase's kind (progress.py's phase_kind).
function kindOf(phase) {
  return KINDS.indexOf(phase.kind) >= 0 ? phase.kind : "other";
}
function timed(phase) {
  return finite(phase.started_at) && finite(phase.seconds);
}
function paused(phase) {
  return finite(phase.paused_seconds) ? phase.paused_seconds : 0;
}

// Tick labels on a time axis: whole seconds under a minute, then minutes and seconds.
function tickText(seconds) {
  if (seconds < 60) return Math.round(seconds * 10) / 10 + " s";
  return formatDuration(seconds);
}

export function createPhases(el) {
  let last = null; // [progress, active]: drawn again at another width

  function describe(phase) {
    const known = timed(phase);
    return (
      phase.name +
      " (" +
      kindOf(phase) +
      "): " +
      (known ? formatDuration(phase.seconds) : "time unknown") +
      (paused(phase) ? ", paused " + formatDuration(paused(phase)) : "")
    );
  }

  function drawList(phases, active) {
    const shown = phases.slice(-LISTED);
    el.list.replaceChildren(
      ...shown.map((phase, i) => {
        const item = html("li", "rv-phase rv-phase-" + kindOf(phase));
        item.setAttribute("data-phase", phase.name);
        item.setAttribute("data-kind", kindOf(phase));
        if (i === shown.length - 1 && active) item.classList.add("rv-phase-current");
        item.appendChild(html("span", "rv-phase-name", phase.name));
        item.appendChild(
          html(
            "span",
            "rv-meta",
            " " +
              (timed(phase) ? formatDuration(phase.seconds) : "time unknown") +
              (paused(phase) ? " + paused " + formatDuration(paused(phase)) : ""),
          ),
        );
        return item;
      }),
    );
  }

  // The legend: each kind's name, its share of the timed seconds and the total.
  function drawLegend(drawn) {
    const sums = { collect: 0, update: 0, other: 0 };
    let pause = 0;
    let busy = 0;
    drawn.forEach((p) => {
      sums[kindOf(p)] += p.seconds;
      busy += p.seconds;
      pause += paused(p);
    });
    const items = KINDS.filter((k) => sums[k] > 0 || k !== "other").map((k) => {
      const item = html("li", "rv-legend-item rv-phase-key rv-phase-" + k);
      item.setAttribute("data-kind", k);
      item.append(
        html("span", "rv-phase-swatch"),
        k +
          " " +
          (busy > 0 ? Math.round((100 * sums[k]) / busy) + " %" : "–") +
          " (" +
          formatDuration(sums[k]) +
          ")",
      );
      return item;
    });
    if (pause > 0) {
      const item = html("li", "rv-legend-item rv-phase-key rv-phase-paused");
      item.setAttribute("data-kind", "paused");
      item.append(
        html("span", "rv-phase-swatch"),
        "paused " + formatDuration(pause) + " (not counted in any phase)",
      );
      items.push(item);
    }
    el.legend.replaceChildren(...items);
    el.legend.hidden = !drawn.length;
    return { busy: busy, pause: pause };
  }

  function drawAxis(drawn, origin, active) {
    const box = el.svg;
    box.replaceChildren();
    el.box.hidden = !drawn.length; // an <svg> takes no `hidden`: its box does
    if (!drawn.length) return;
    const lanes = KINDS.filter((k) => k !== "other" || drawn.some((p) => kindOf(p) === k));
    const width = Math.max(el.box.clientWidth, 320);
    const height = TOP + lanes.length * (LANE + GAP) + AXIS;
    const end = Math.max.apply(
      null,
      drawn.map((p) => p.started_at + p.seconds + paused(p)),
    );
    const span = Math.max(end - origin, 1e-3);
    const right = width - RIGHT;
    const x = (t) => LEFT + ((t - origin) * (right - LEFT)) / span;
    box.setAttribute("viewBox", "0 0 " + width + " " + height);
    box.setAttribute("height", height);
    const axisY = TOP + lanes.length * (LANE + GAP);
    const grid = svg("g", { class: "rv-axes" }, box);
    ticks(0, span, Math.max(2, Math.min(8, Math.floor(width / 110)))).forEach((t) => {
      const at = x(origin + t).toFixed(1);
      svg("line", { class: "rv-gridline", x1: at, x2: at, y1: TOP, y2: axisY }, grid);
      svg(
        "text",
        { class: "rv-tick", x: at, y: axisY + 14, "text-anchor": "middle" },
        grid,
      ).textContent = tickText(t);
    });
    svg("line", { class: "rv-axis-line", x1: LEFT, x2: right, y1: axisY, y2: axisY }, grid);
    svg(
      "text",
      { class: "rv-axis-label", x: (LEFT + right) / 2, y: height - 2, "text-anchor": "middle" },
      grid,
    ).textContent = "wall time since the first phase shown";
    lanes.forEach((k, n) => {
      svg(
        "text",
        {
          class: "rv-tick rv-phase-lane",
          x: LEFT - 6,
          y: TOP + n * (LANE + GAP) + LANE / 2,
          dy: "0.32em",
          "text-anchor": "end",
        },
        box,
      ).textContent = k;
    });
    drawn.forEach((p, i) => {
      const lane = lanes.indexOf(kindOf(p));
      const y = TOP + lane * (LANE + GAP);
      const x0 = x(p.started_at);
      const w = Math.max(x(p.started_at + p.seconds) - x0, 1);
      const group = svg(
        "g",
        {
          class:
            "rv-phase-bar rv-phase-" +
            kindOf(p) +
            (active && i === drawn.length - 1 ? " rv-phase-current" : ""),
          "data-phase": p.name,
          "data-kind": kindOf(p),
        },
        box,
      );
      svg(
        "rect",
        {
          class: "rv-phase-rect",
          x: x0.toFixed(2),
          y: y,
          width: w.toFixed(2),
          height: LANE,
          rx: 2,
        },
        group,
      );
      if (paused(p) > 0) {
        const px = x0 + w;
        const pw = Math.max(x(p.started_at + p.seconds + paused(p)) - px, 1);
        svg(
          "rect",
          {
            class: "rv-phase-rect-paused",
            x: px.toFixed(2),
            y: y + 3,
            width: pw.toFixed(2),
            height: LANE - 6,
          },
          group,
        );
      }
      svg("title", {}, group).textContent = describe(p);
      const before = drawn[i - 1];
      if (before && finite(p.attempt) && p.attempt !== before.attempt) {
        const at = x(p.started_at).toFixed(2);
        const mark = svg("g", { class: "rv-phase-attempt", "data-attempt": p.attempt }, box);
        svg("line", { x1: at, x2: at, y1: 0, y2: axisY }, mark);
        svg("text", { x: (+at - 3).toFixed(2), y: 10, "text-anchor": "end" }, mark).textContent =
          "attempt " + (p.attempt + 1);
      }
    });
  }

  function draw(progress, active) {
    last = [progress, active];
    const phases = progress?.phases || [];
    const width = Math.max(el.box.parentNode.clientWidth - LEFT - RIGHT, 100);
    const known = phases.filter(timed);
    const drawn = known.slice(-Math.min(DRAWN, Math.floor(width / PHASE_PX)));
    let origin = drawn.length ? drawn[0].started_at : null;
    if (
      drawn.length === known.length &&
      finite(progress.started_at) &&
      progress.started_at <= origin
    )
      origin = progress.started_at; // the run's own start
    drawList(phases, active);
    const sums = drawLegend(drawn);
    drawAxis(drawn, origin, active);
    const unknown = phases.length - known.length;
    const said = [];
    if (drawn.length) {
      said.push(
        formatCount(drawn.length) +
          " phase" +
          (drawn.length === 1 ? "" : "s") +
          " drawn over " +
          formatDuration(sums.busy + sums.pause) +
          (drawn.length < known.length ? " (the newest of " + formatCount(known.length) + ")" : ""),
      );
    }
    if (unknown) {
      said.push(
        formatCount(unknown) +
          " phase" +
          (unknown === 1 ? "" : "s") +
          " without a known " +
          "duration: listed, not drawn to scale",
      );
    }
    el.note.textContent = said.join("; ");
    el.note.hidden = !said.length;
    el.svg.setAttribute("aria-label", "Phase timeline: " + (said.join("; ") || "no phase yet"));
    el.details.hidden = !phases.length;
    if (unknown && !drawn.length) el.details.open = true;
  }

  window.addEventListener("resize", () => {
    if (last) draw(last[0], last[1]);
  });
  return { draw: draw };
}
