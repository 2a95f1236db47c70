// Relax Rollout Viewer: the Training page. Polls the snapshot (GET api/train/state, with the
// metric and log cursors so each answer holds only what is new) and draws it: the top bar (job
// summary, the status chips with how an ended job ended and the job's note, the buttons,
// enabled as the job's status allows), the reading, cards and curve (training-metrics.js, one
// line per attempt: training-points.js), progress and process (the phase timeline:
// training-phases.js), the form (training-form.js; folded to one line of the values in force
// while a job runs), the log (training-log.js), the episodes (training-episodes.js) and the
// links into the viewer. The preview asks for a synthetic snapshot (`preview=rising|plateau|kl`)
// once and starts nothing. Buttons POST JSON to api/train/* (same origin); every URL comes from
// <main>'s data attributes.
import { byId, element as html } from "./lib/dom.js";
import { requestJson } from "./lib/fetch.js";
import {
  formatCount as count,
  formatDuration as duration,
  finite,
  formatShare,
  formatUnit,
} from "./lib/numbers.js";
import { parsePollMs } from "./lib/poll.js";
import { renderBackend } from "./training-backend.js";
import { createEpisodes } from "./training-episodes.js";
import { createForm } from "./training-form.js";
import { createLog } from "./training-log.js";
import { createMetrics } from "./training-metrics.js";
import { createPhases } from "./training-phases.js";
import { createPoints } from "./training-points.js";

const ACTIVE = { starting: 1, running: 1, pausing: 1, paused: 1, stopping: 1 };
const LOG_WHOLE = 4000; // the lines a whole read asks for: all the server and the page keep
// How an ended job ended (job.outcome): the chip's text and what its title explains.
const OUTCOMES = {
  finished: ["finished", "the script ran to its end"],
  stopped: ["stopped", "it ended after the stop request"],
  forced: ["forced stop", "it did not stop within the grace period and was killed"],
  failed: ["failed", "a non-zero exit, or the script wrote training_failure.json"],
};
let main;
let form;
let log;
let metrics;
let kept;
let timeline;
let episodes;
let pollMs = 3000;
const state = {
  schema: null,
  snap: null,
  metricCursor: null,
  logCursor: null,
  identity: null,
  process: null,
  attempts: null,
  preview: "",
  timer: null,
  seq: 0,
  acting: false,
  formOpen: false,
};

function text(id, value) {
  byId(id).textContent = value;
}

// -- talking to the server -------------------------------------------------------------
// GET `url`, or POST `body` as JSON: a promise of {ok, status, body}.
function call(url, body) {
  return requestJson(url, { body: body });
}

function stateUrl() {
  const url = new URL(main.dataset.stateUrl, window.location.href);
  if (state.preview) url.searchParams.set("preview", state.preview);
  else {
    if (state.metricCursor !== null) url.searchParams.set("after_metric", state.metricCursor);
    if (state.logCursor !== null) url.searchParams.set("after_log", state.logCursor);
    else url.searchParams.set("log_tail", LOG_WHOLE); // read whole, not the last 500
  }
  const page = episodes.params(); // an older page of the episode table
  Object.keys(page).forEach((name) => {
    url.searchParams.set(name, page[name]);
  });
  return url;
}

function poll() {
  clearTimeout(state.timer);
  const seq = ++state.seq;
  const incremental = state.metricCursor !== null && !state.preview;
  call(stateUrl())
    .then((answer) => {
      if (seq !== state.seq) return; // a newer request (an action, a refresh) took over
      if (!answer.ok)
        throw new Error(answer.body.message || "the server answered " + answer.status);
      connection(state.preview ? "preview" : "live");
      if (take(answer.body, incremental)) return poll(); // another job: read it whole
      if (!state.preview) schedule();
    })
    .catch((error) => {
      if (seq !== state.seq) return;
      connection("lost", error.message);
      schedule();
    });
}
// The next poll; a hidden tab asks nothing until it is shown again (as live.js does).
function schedule() {
  clearTimeout(state.timer);
  state.timer = setTimeout(() => {
    if (document.hidden) state.asleep = true;
    else poll();
  }, pollMs);
}
function forget() {
  // nothing read yet: the next answer is taken whole
  state.metricCursor = state.logCursor = state.identity = state.process = state.attempts = null;
  kept.clear();
  log.reset();
}
function restart() {
  // forget what was read and read everything again
  forget();
  state.snap = null;
  episodes.reset();
  poll();
}

function connection(status, why) {
  const chip = byId("rv-chip-connection");
  chip.setAttribute("data-connection", status);
  chip.querySelector(".rv-chip-value").textContent = status === "lost" ? "lost, retrying" : status;
  chip.title = why || "";
}

// -- a snapshot ------------------------------------------------------------------------
// Takes a snapshot into the page; true when the caller must read it whole first: it is of
// another job than the cursors are (or the preview), or the server's cursors went back (the
// viewer was restarted). A resume is a new process (attempt) of the same job: the server
// numbers its log lines and points on from the earlier attempt's, so the cursors stay, the
// earlier attempt's points stay, and a marker line says where the new attempt begins.
function take(snap, incremental) {
  const job = snap.job || {};
  const m = snap.metrics || {};
  const l = snap.log || {};
  const identity = (snap.preview || "") + " " + (job.id || "");
  const process = identity + " " + (job.started_at || "");
  const behind =
    (finite(l.cursor) && state.logCursor !== null && l.cursor < state.logCursor) ||
    (finite(m.cursor) && state.metricCursor !== null && m.cursor < state.metricCursor);
  const other = identity !== state.identity;
  if ((other || behind) && incremental) {
    forget();
    if (!other) state.identity = identity; // the same job, read again: its table page stays
    return true;
  }
  if (other || behind) {
    forget();
    if (other && state.snap) episodes.reset(); // another job's table starts on its newest page
    state.identity = identity;
  }
  state.process = process;
  state.snap = snap;
  markAttempts(m.attempts);
  kept.setAttempts(m.attempts);
  kept.add(m.points);
  state.metricCursor = finite(m.cursor) ? m.cursor : null;
  state.logCursor = finite(l.cursor) ? l.cursor : null;
  log.add(l.lines);
  render(snap);
  return false;
}

// A marker in the log where each new attempt begins (once per attempt, while the page is
// open: a page opened later reads the lines whole and has no place to put one).
function markAttempts(attempts) {
  attempts = attempts || [];
  if (state.attempts !== null) {
    attempts.slice(state.attempts).forEach((a) => {
      if (!a || !(a.index > 0)) return;
      log.mark(
        "— the job resumed (attempt " +
          (a.index + 1) +
          ")" +
          (a.resumed_from ? " from " + a.resumed_from : "") +
          (finite(a.start_timesteps) ? " at " + count(a.start_timesteps) + " timesteps" : "") +
          " —",
      );
    });
  }
  state.attempts = attempts.length;
}

// How an ended job ended (`job.outcome`); null while it is active.
function outcomeOf(job) {
  return ACTIVE[job.status] ? null : job.outcome || null;
}

function render(snap) {
  const job = snap.job || {};
  const progress = snap.progress || {};
  const outcome = outcomeOf(job);
  const active = !!ACTIVE[job.status];
  renderTop(job, progress, snap, outcome);
  renderProgress(job, progress);
  renderRecovery(snap.recovery || {});
  metrics.update(kept, snap.cards, snap.reading, snap.metrics?.keys, outcome);
  episodes.render(snap.episodes);
  renderButtons(job.status || "idle", snap.recovery || {});
  renderValues(job, active || !!state.preview);
  if (!snap.preview) form.showJob(state.process, job.values); // what the job in view ran with
}

function chip(id, value) {
  byId(id).querySelector(".rv-chip-value").textContent = value;
}

function renderTop(job, progress, snap, outcome) {
  const status = job.status || "idle";
  const said = outcome && (OUTCOMES[outcome] || [outcome, ""]);
  text(
    "rv-train-summary",
    job.id
      ? "job " +
          job.id +
          (job.run ? " · run " + job.run : "") +
          " · " +
          status +
          (said && said[0] !== status ? " (" + said[0] + ")" : "")
      : "no job yet",
  );
  const process = byId("rv-chip-process");
  process.setAttribute("data-status", status);
  process.setAttribute("data-ended", said ? "true" : "false"); // the outcome chip has the colour
  chip("rv-chip-process", status + (job.pid ? " (pid " + job.pid + ")" : ""));
  const ended = byId("rv-chip-outcome");
  ended.hidden = !said;
  ended.setAttribute("data-outcome", outcome || "");
  ended.title = said ? said[1] : "";
  chip("rv-chip-outcome", said ? said[0] : "–");
  const note = byId("rv-train-note");
  const noted = typeof job.note === "string" ? job.note : "";
  if (note.textContent !== noted) note.textContent = noted; // a live region: only changes
  note.hidden = !noted;
  chip(
    "rv-chip-progress",
    formatShare(progress.fraction), // "–" when unknown
  );
  chip("rv-chip-wall", duration(job.wall_seconds));
  chip("rv-chip-device", job.device || "–");
  renderBackend(job); // training-backend.js: the cluster chip and the job's own message
  byId("rv-train-preview-note").hidden = !snap.preview;
  const links = snap.links || {};
  [
    ["rv-link-samples", links.samples],
    ["rv-link-stats", links.stats],
    ["rv-link-trends", links.trends],
  ].forEach((pair) => {
    const a = byId(pair[0]);
    a.hidden = !pair[1];
    if (pair[1]) a.href = pair[1];
  });
}

function renderProgress(job, progress) {
  const bar = byId("rv-train-bar");
  const fraction = finite(progress.fraction) ? progress.fraction : 0;
  bar.value = Math.min(Math.max(fraction, 0), 1);
  bar.setAttribute("data-fraction", fraction);
  text(
    "rv-train-bar-text",
    count(progress.timesteps) + " / " + count(progress.total) + " timesteps",
  );
  let eta = "";
  if (finite(progress.eta_seconds) && ACTIVE[job.status]) {
    const end = new Date(Date.now() + progress.eta_seconds * 1000);
    eta = "ETA " + duration(progress.eta_seconds) + ", ends about " + end.toLocaleTimeString();
  }
  text("rv-train-eta", eta);
  // A resumed job: whose progress this is (the running attempt's own, not the killed run's).
  const attempt = finite(progress.attempt) ? progress.attempt : 0;
  let said = "";
  if (attempt > 0) {
    const from = kept.attempts().filter((a) => a.index === attempt)[0] || {};
    said =
      "attempt " +
      (attempt + 1) +
      (finite(from.start_timesteps)
        ? ", resumed at " + count(from.start_timesteps) + " timesteps"
        : "");
  }
  text("rv-train-attempt", said);
  byId("rv-train-attempt").hidden = !said;
  text("rv-train-pid", job.pid ? String(job.pid) : "–");
  text(
    "rv-train-throughput",
    formatUnit(progress.throughput, "timesteps/s"), // "927 timesteps/s"; "–" when unknown
  );
  text(
    "rv-train-exit",
    (job.exit_code === null || job.exit_code === undefined ? "–" : String(job.exit_code)) +
      (job.force_killed ? " (killed after the grace period)" : ""),
  );
  text("rv-train-phase", progress.phase || "–");
  timeline.draw(progress, !!ACTIVE[job.status]);
  text("rv-train-command", job.command_line || "");
}

// The recovery state: the checkpoint a resume starts from, one line per checkpoint kept (the
// model file, with its JSON sidecar when it has one), a forced stop, a failure.
function renderRecovery(recovery) {
  const parts = [];
  const resume = recovery.resume;
  const box = byId("rv-train-recovery");
  if (resume)
    parts.push(
      html(
        "p",
        "",
        "Latest checkpoint: " +
          (resume.checkpoint || "?") +
          (finite(resume.timesteps) ? " at " + count(resume.timesteps) + " timesteps" : ""),
      ),
    );
  const checkpoints = recovery.checkpoints || [];
  if (checkpoints.length) {
    parts.push(
      html(
        "p",
        "",
        count(checkpoints.length) +
          " checkpoint" +
          (checkpoints.length === 1 ? "" : "s") +
          " kept:",
      ),
    );
    const list = html("ul", "rv-train-checkpoints");
    checkpoints.forEach((c) => {
      const item = list.appendChild(html("li", "", c.name));
      item.setAttribute("data-kind", c.kind || "");
      const about = [
        c.kind,
        finite(c.timesteps) ? count(c.timesteps) + " timesteps" : "",
        c.sidecar ? "sidecar " + c.sidecar : "",
      ]
        .filter(Boolean)
        .join(" · ");
      if (about) item.appendChild(html("span", "rv-meta", " " + about));
    });
    parts.push(list);
  }
  const forced = recovery.forced_stop;
  const failure = recovery.failure;
  if (forced)
    parts.push(
      html(
        "p",
        "",
        "Killed: " +
          (forced.reason || "no exit within the grace period") +
          (forced.recovery?.checkpoint ? "; recover from " + forced.recovery.checkpoint : ""),
      ),
    );
  if (failure)
    parts.push(
      html(
        "p",
        "",
        "Failed" +
          (finite(failure.step) ? " at step " + count(failure.step) : "") +
          ": " +
          ([failure.error, failure.message].filter(Boolean).join(": ") || "see the log") +
          (failure.recovery_checkpoint ? "; saved " + failure.recovery_checkpoint : ""),
      ),
    );
  box.replaceChildren(...parts);
  box.hidden = !parts.length;
}

// While a job runs (or a preview shows one), the form folds to one line of the values in
// force; the toggle shows the full (locked) form.
function renderValues(job, folded) {
  const box = byId("rv-train-values");
  const toggle = byId("rv-train-form-toggle");
  box.hidden = !folded;
  if (folded) {
    const line = byId("rv-train-values-text");
    const values = form.describe(job.values);
    line.replaceChildren(...(values.length ? values : ["the defaults"]));
  }
  const open = !folded || state.formOpen;
  byId("rv-train-form-box").hidden = !open;
  toggle.setAttribute("aria-expanded", open ? "true" : "false");
  toggle.textContent = state.formOpen ? "Hide the full form" : "Show the full form";
}

// -- buttons ---------------------------------------------------------------------------
function renderButtons(status, recovery) {
  const preview = !!state.preview;
  const active = !!ACTIVE[status];
  const busy = state.acting;
  const pause = byId("rv-train-pause");
  const held = status === "paused" || status === "pausing";
  pause.textContent = held ? "Resume" : "Pause";
  pause.setAttribute("data-action", held ? "resume" : "pause");
  pause.disabled = busy || preview || !(status === "running" || held);
  byId("rv-train-stop").disabled = busy || preview || !active || status === "stopping";
  byId("rv-train-start").disabled = busy || preview || active || !state.schema;
  byId("rv-train-resume-latest").disabled =
    busy ||
    preview ||
    active ||
    !recovery.resume ||
    !state.schema ||
    state.schema.resumable === false;
  form.lock(active || preview);
  byId("rv-train-locked").hidden = !active;
}

function message(value) {
  const box = byId("rv-train-message");
  box.textContent = value || "";
  box.hidden = !value;
}

// POST an action; the answer is the snapshot (taken at once) or the error shape.
function act(url, body) {
  state.acting = true;
  renderButtons(state.snap?.job?.status || "idle", {});
  state.seq += 1; // an answer to a poll sent before this is stale
  clearTimeout(state.timer);
  return call(url, body).then(
    (answer) => {
      state.acting = false;
      if (answer.ok) {
        message("");
        form.showErrors(null);
        take(answer.body, false);
      } else {
        message(answer.body.message || "the server answered " + answer.status);
        if (answer.body.errors) form.showErrors(answer.body.errors);
      }
      poll();
    },
    (error) => {
      state.acting = false;
      message("Could not reach the server: " + error.message);
      poll();
    },
  );
}

function start(resumeLatest) {
  return act(main.dataset.startUrl, { values: form.values(), resume_latest: resumeLatest });
}

function setup() {
  byId("rv-train-refresh").addEventListener("click", restart);
  byId("rv-train-preview").addEventListener("change", (event) => {
    state.preview = event.target.value;
    restart();
  });
  byId("rv-train-pause").addEventListener("click", (event) => {
    const resume = event.currentTarget.getAttribute("data-action") === "resume";
    act(resume ? main.dataset.resumeUrl : main.dataset.pauseUrl, {});
  });
  byId("rv-train-stop").addEventListener("click", () => {
    act(main.dataset.stopUrl, {});
  });
  byId("rv-train-resume-latest").addEventListener("click", () => {
    start(true);
  });
  byId("rv-train-form").addEventListener("submit", (event) => {
    event.preventDefault();
    start(false);
  });
  byId("rv-train-defaults").addEventListener("click", () => {
    form.reset();
  });
  byId("rv-train-form-toggle").addEventListener("click", () => {
    state.formOpen = !state.formOpen;
    if (state.snap) {
      const job = state.snap.job || {};
      renderValues(job, !!ACTIVE[job.status] || !!state.preview);
    }
  });
}

function loadSchema() {
  call(main.dataset.schemaUrl)
    .then((answer) => {
      if (!answer.ok)
        throw new Error(answer.body.message || "the server answered " + answer.status);
      state.schema = answer.body;
      form.build(answer.body);
      metrics.setSchema(answer.body.metrics);
      if (state.snap) render(state.snap);
    })
    .catch((error) => {
      message("Could not load the configuration schema: " + error.message + ". Retrying.");
      setTimeout(loadSchema, pollMs);
    });
}

export function startTraining() {
  main = byId("rv-main");
  if (!main?.dataset.stateUrl) return;
  pollMs = parsePollMs(main.dataset.pollMs);
  // The shared partial puts the metric cards between the reading and the curve; here the
  // curve comes right after the reading (what one watches while a run goes), then the cards.
  const curve = byId("rv-trend-chart").closest("section");
  const cards = byId("rv-cards");
  if (curve && cards && cards.nextElementSibling === curve) curve.after(cards);
  form = createForm(byId("rv-train-form"), byId("rv-train-presets"));
  log = createLog({
    list: byId("rv-log"),
    filter: byId("rv-log-filter"),
    errors: byId("rv-log-errors"),
    progress: byId("rv-log-progress"),
    follow: byId("rv-log-follow"),
    count: byId("rv-log-count"),
  });
  metrics = createMetrics();
  kept = createPoints();
  timeline = createPhases({
    box: byId("rv-train-timeline-box"),
    svg: byId("rv-train-timeline"),
    legend: byId("rv-train-phase-legend"),
    note: byId("rv-train-phase-note"),
    details: byId("rv-train-phase-details"),
    list: byId("rv-train-phases"),
  });
  episodes = createEpisodes(
    {
      table: byId("rv-episodes"),
      count: byId("rv-episodes-count"),
      range: byId("rv-episodes-range"),
      newest: byId("rv-episodes-newest"),
      newer: byId("rv-episodes-newer"),
      older: byId("rv-episodes-older"),
    },
    poll,
  );
  setup();
  document.addEventListener("visibilitychange", () => {
    if (!document.hidden && state.asleep) {
      state.asleep = false;
      poll();
    }
  });
  loadSchema();
  poll();
}
