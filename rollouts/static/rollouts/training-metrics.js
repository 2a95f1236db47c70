// Relax Rollout Viewer: the Training page's numbers: the convergence reading (reading.js, with
// the reading's notes: one per rule, its window and numbers), a card per metric (latest,
// change, sparkline, abnormal highlight) and the curve of the chosen metric against timesteps
// (chart.js: crosshair read-out, smoothing, the metric dictionary's reference lines such as
// approx_kl = 0.05), one line per attempt of the job with each resume marked.
//
//   const metrics = createMetrics();          // finds its elements by id
//   metrics.setSchema(schema.metrics);        // labels, units, directions, reference lines
//   metrics.update(kept, cards, reading, keys, outcome);  // kept: createPoints()
import { createChart, sparkline } from "./chart.js";
import { pageTools } from "./chart-tools.js";
import { byId, element as html, svg } from "./lib/dom.js";
import {
  formatCount as count,
  finite,
  formatNumber as fmt,
  formatDelta as fmtDelta,
  formatUnit,
} from "./lib/numbers.js";
import { load, store } from "./lib/storage.js";
import { renderReading as renderReadingBox } from "./reading.js";

const SMOOTHING_KEY = "rv-training-smoothing";
const CHOICE_KEY = "rv-training-curve";
// What the chart says of a resume: "resumed from <checkpoint> at <timesteps>".
function resumeText(attempt) {
  return (
    "resumed" +
    (attempt.resumed_from ? " from " + attempt.resumed_from : "") +
    (finite(attempt.start_timesteps) ? " at " + count(attempt.start_timesteps) : "")
  );
}

export function createMetrics() {
  let dictionary = {}; // key -> {key, label, unit, direction, reference}
  let order = []; // the dictionary's keys, in its order
  let kept = null;
  let points = [];
  let keys = [];
  let choice = null;
  let smoothing = 0.6;
  let optionsKey = "";
  let resumes = []; // the attempts after the first: a marker each on the curve
  let ticksOf = {}; // a drawn line's key -> its attempt's points by timesteps
  const chart = createChart(byId("rv-trend-chart"), {
    tooltip: byId("rv-crosshair-values"),
    legend: byId("rv-legend"),
    format: (v, key) => withUnit(v, unitOf(key)),
    xLabel: "timesteps",
    decorate: markResumes,
    tools: pageTools(() => "training-" + (choice || "curve"), false),
    gapReason: (point, lineKey) => {
      const at = ticksOf[lineKey];
      return at && !at[point.step] ? "(not in this attempt)" : "";
    },
  });

  // A dashed vertical line where each resumed attempt starts, labelled with its checkpoint.
  function markResumes(box, scale) {
    const top = scale.y(scale.y1);
    const middle = (scale.left + scale.right) / 2;
    resumes.forEach((attempt, n) => {
      if (!finite(attempt.start_timesteps)) return;
      const x = Math.min(Math.max(scale.x(attempt.start_timesteps), scale.left), scale.right);
      const group = svg(
        "g",
        {
          class: "rv-resume",
          "data-attempt": attempt.index,
          "data-timesteps": attempt.start_timesteps,
        },
        box,
      );
      svg(
        "line",
        { class: "rv-resume-line", x1: x.toFixed(2), x2: x.toFixed(2), y1: top, y2: scale.bottom },
        group,
      );
      const label = svg(
        "text",
        { class: "rv-resume-label", y: (top + 12 + 14 * (n % 3)).toFixed(2) },
        group,
      );
      svg("title", {}, group).textContent = resumeText(attempt);
      placeLabel(
        label,
        x,
        scale,
        [resumeText(attempt), "resumed at " + count(attempt.start_timesteps)],
        x > middle,
      );
    });
  }

  // The label beside its marker, on the side with room (`preferEnd`: left of it first); when
  // no side has room for the whole text, the short one (the whole is the marker's title).
  function placeLabel(label, x, scale, texts, preferEnd) {
    const sides = preferEnd ? [true, false] : [false, true];
    for (let i = 0; i < texts.length; i += 1) {
      label.textContent = texts[i];
      const width = label.getComputedTextLength();
      for (let k = 0; k < 2; k += 1) {
        const end = sides[k];
        const at = end ? x - 4 : x + 4;
        if (end ? at - width >= scale.left : at + width <= scale.right) {
          label.setAttribute("x", at.toFixed(2));
          label.setAttribute("text-anchor", end ? "end" : "start");
          return;
        }
      }
    }
    label.setAttribute("x", (preferEnd ? x - 4 : x + 4).toFixed(2));
    label.setAttribute("text-anchor", preferEnd ? "end" : "start");
  }

  function unitOf(key) {
    key = String(key).split("@")[0]; // an attempt's line: the metric's key, then @attempt
    const unit = dictionary[key]?.unit;
    return unit || "";
  }
  function labelOf(key) {
    return dictionary[key]?.label || key;
  }

  function setSchema(metrics) {
    dictionary = {};
    order = (metrics || []).map((m) => {
      dictionary[m.key] = m;
      return m.key;
    });
    optionsKey = "";
  }

  // The keys with points: the dictionary's first (in its order), then the others as seen.
  function knownKeys(listed) {
    const seen = {};
    (listed || []).forEach((k) => {
      seen[k] = 1;
    });
    points.forEach((p) => {
      Object.keys(p.metrics || {}).forEach((k) => {
        seen[k] = 1;
      });
    });
    return order.filter((k) => seen[k]).concat(Object.keys(seen).filter((k) => !dictionary[k]));
  }
  function effectiveChoice() {
    if (choice && keys.indexOf(choice) >= 0) return choice;
    return keys.length ? keys[0] : null;
  }

  function renderOptions() {
    const select = byId("rv-series");
    const joined = keys.join("\n");
    if (joined !== optionsKey) {
      // rebuilt only when the keys change: an open list stays
      optionsKey = joined;
      select.replaceChildren(
        ...keys.map((k) => new Option(labelOf(k) + (labelOf(k) === k ? "" : " (" + k + ")"), k)),
      );
    }
    select.value = effectiveChoice() || "";
  }

  // One line per attempt (a single attempt: the metric's line, as on the trends page). Each
  // attempt's line runs on over the ticks only another attempt has.
  function renderChart() {
    const key = effectiveChoice();
    const box = byId("rv-trend-chart");
    byId("rv-curve-empty").hidden = points.length > 0;
    box.setAttribute("data-series", key || "");
    const series = kept ? kept.series() : { xs: [], groups: [] };
    const several = series.groups.length > 1;
    const attempts = kept ? kept.attempts() : [];
    const drawn = {};
    series.groups.forEach((g) => {
      drawn[g.attempt] = true;
    });
    resumes = attempts.filter((a) => a.index > 0 && drawn[a.index]);
    box.setAttribute("data-attempts", series.groups.length);
    ticksOf = {};
    const lines = !key
      ? []
      : series.groups.map((group) => {
          const lineKey = several ? key + "@" + group.attempt : key;
          if (several) ticksOf[lineKey] = group.at;
          return {
            key: lineKey,
            label: labelOf(key) + (several ? " · attempt " + (group.attempt + 1) : ""),
            values: series.xs.map((x) => {
              const p = group.at[x.step];
              return p ? p.metrics?.[key] : undefined;
            }),
            connect: several,
          };
        });
    const references = key && dictionary[key] ? dictionary[key].reference || [] : [];
    chart.draw(points.length ? series.xs : [], lines, smoothing, references);
  }

  function renderCards(cards) {
    const box = byId("rv-cards");
    box.replaceChildren(
      ...(cards || []).map((card) => {
        const node = html(
          "section",
          "rv-card rv-metric-card" + (card.abnormal ? " rv-abnormal" : ""),
        );
        node.setAttribute("data-key", card.key);
        node.appendChild(html("h2", "rv-card-title", card.label || labelOf(card.key)));
        node
          .appendChild(html("p", "rv-big rv-card-latest", withUnit(card.latest, card.unit)))
          .setAttribute("data-value", card.latest);
        const delta = node.appendChild(html("p", "rv-card-delta", fmtDelta(card.delta)));
        const direction = dictionary[card.key]?.direction || 0;
        const good = finite(card.delta) ? card.delta * direction : 0;
        if (good) delta.classList.add(good > 0 ? "rv-delta-good" : "rv-delta-bad");
        delta.appendChild(
          html(
            "span",
            "rv-meta",
            finite(card.delta) ? " since the previous point" : " first point",
          ),
        );
        const spark = (card.spark || []).map((s) => (finite(s) ? s : s?.value)).filter(finite);
        if (spark.length) node.appendChild(sparkline(spark));
        if (card.abnormal)
          node.appendChild(html("p", "rv-card-why", card.why || "abnormal change"));
        node.addEventListener("click", () => {
          choose(card.key);
        });
        return node;
      }),
    );
  }

  // The verdict (reading.js), then its notes: one line per rule, with its window and numbers.
  // `outcome`: how the job ended (its chip's data); the verdict's tone is the server's, which
  // puts a failed job over any curve.
  function renderReading(reading, outcome) {
    const box = byId("rv-reading");
    box.setAttribute("data-outcome", outcome || "");
    if (!reading) return;
    renderReadingBox(box, reading, fmt, fmtDelta);
    let notes = box.querySelector(".rv-reading-notes");
    if (!notes) {
      notes = html("ul", "rv-reading-notes");
      notes.setAttribute("aria-label", "How each rule read");
      box.querySelector(".rv-reading-why").after(notes);
    }
    const said = (Array.isArray(reading.notes) ? reading.notes : []).filter(
      (n) => typeof n === "string" && n,
    );
    notes.replaceChildren(...said.map((n) => html("li", "", n)));
    notes.hidden = !said.length;
  }

  function update(newKept, cards, reading, listedKeys, outcome) {
    kept = newKept;
    points = kept.list();
    keys = knownKeys(listedKeys);
    renderReading(reading, outcome);
    renderCards(cards);
    renderOptions();
    renderChart();
  }

  function choose(key) {
    choice = key;
    store(CHOICE_KEY, key);
    renderOptions();
    renderChart();
  }

  choice = load(CHOICE_KEY, null);
  byId("rv-series").addEventListener("change", (event) => {
    choose(event.target.value);
  });
  const slider = byId("rv-smoothing");
  const stored = load(SMOOTHING_KEY, NaN);
  if (stored >= 0 && stored <= 0.99) slider.value = stored;
  function setSmoothing() {
    smoothing = parseFloat(slider.value);
    byId("rv-smoothing-value").textContent = smoothing.toFixed(2);
    renderChart();
  }
  slider.addEventListener("input", () => {
    store(SMOOTHING_KEY, parseFloat(slider.value));
    setSmoothing();
  });
  smoothing = parseFloat(slider.value);
  byId("rv-smoothing-value").textContent = smoothing.toFixed(2);

  return { setSchema: setSchema, update: update, choose: choose };
}

// A value and its unit held together ("927 timesteps/s"), or the value alone.
function withUnit(value, unit) {
  return unit ? formatUnit(value, unit) : fmt(value);
}
