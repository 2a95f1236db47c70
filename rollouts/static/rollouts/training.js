// Relax Rollout Viewer: the Training page. Polls the snapshot (GET api/train/state, with the
// metric and log cursors so each answer holds only what is new) and draws it: the top bar (job
// summary, five status chips, the buttons, enabled as the job's status allows), progress and
// process, the form (training-form.js), the reading, cards and curve (training-metrics.js), the
// log (training-log.js), the episodes and the links into the viewer. The preview asks for a
// synthetic snapshot (`preview=rising|plateau|kl`) once and starts nothing. Buttons POST JSON
// to api/train/* (same origin); every URL comes from <main>'s data attributes.
(function () {
  "use strict";

  var POINTS_MAX = 5000; // as the server keeps
  var PHASES_SHOWN = 24; // the newest phases of the timeline
  var ACTIVE = { starting: 1, running: 1, pausing: 1, paused: 1, stopping: 1 };
  var html = window.rv.element; // shared.js
  var finite = window.rv.finite;
  var T = window.rvTraining; // training-form, -log, -metrics and -backend.js
  var duration = T.duration;
  var main, form, log, metrics, pollMs = 3000;
  var state = { schema: null, snap: null, points: [], metricCursor: null, logCursor: null,
    process: null, preview: "", timer: null, seq: 0, acting: false };

  function byId(id) { return document.getElementById(id); }
  function text(id, value) { byId(id).textContent = value; }

  // -- talking to the server -------------------------------------------------------------
  function call(url, body) {
    var init = { credentials: "same-origin", headers: { Accept: "application/json" } };
    if (body !== undefined) {
      init.method = "POST";
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    return fetch(url, init).then(function (r) {
      return r.json().catch(function () { return {}; }).then(function (json) {
        return { ok: r.ok, status: r.status, body: json };
      });
    });
  }

  function stateUrl() {
    var url = new URL(main.dataset.stateUrl, window.location.href);
    if (state.preview) url.searchParams.set("preview", state.preview);
    else {
      if (state.metricCursor !== null) url.searchParams.set("after_metric", state.metricCursor);
      if (state.logCursor !== null) url.searchParams.set("after_log", state.logCursor);
    }
    return url;
  }

  function poll() {
    clearTimeout(state.timer);
    var seq = ++state.seq, incremental = state.metricCursor !== null && !state.preview;
    call(stateUrl()).then(function (answer) {
      if (seq !== state.seq) return; // a newer request (an action, a refresh) took over
      if (!answer.ok) throw new Error(answer.body.message || "the server answered " + answer.status);
      connection(state.preview ? "preview" : "live");
      if (take(answer.body, incremental)) return poll(); // another job: read it whole
      if (!state.preview) schedule();
    }).catch(function (error) {
      if (seq !== state.seq) return;
      connection("lost", error.message);
      schedule();
    });
  }
  // The next poll; a hidden tab asks nothing until it is shown again (as live.js does).
  function schedule() {
    clearTimeout(state.timer);
    state.timer = setTimeout(function () { if (document.hidden) state.asleep = true; else poll(); },
      pollMs);
  }
  function restart() { // forget what was read and read everything again
    state.metricCursor = state.logCursor = state.process = state.snap = null;
    state.points = [];
    log.reset();
    poll();
  }

  function connection(status, why) {
    var chip = byId("rv-chip-connection");
    chip.setAttribute("data-connection", status);
    chip.querySelector(".rv-chip-value").textContent = status === "lost" ? "lost, retrying" : status;
    chip.title = why || "";
  }

  // -- a snapshot ------------------------------------------------------------------------
  // Takes a snapshot into the page; true when it comes from another process than the cursors
  // did (the caller then reads it whole). A resume is a new process of the same job: its curve
  // goes on from the old points (a point at or before a kept one replaces those from there on),
  // and its log follows the old lines.
  function take(snap, incremental) {
    var job = snap.job || {}, m = snap.metrics || {}, l = snap.log || {};
    var process = [snap.preview || "", job.id, job.started_at].join(" ");
    if (process !== state.process && incremental) {
      state.metricCursor = state.logCursor = null;
      return true;
    }
    if (process !== state.process) {
      var resumed = state.snap && !snap.preview && !state.snap.preview && job.id &&
        job.id === (state.snap.job || {}).id;
      if (resumed) log.restart("--- the job resumed: a new process ---");
      else { state.points = []; log.reset(); }
      state.process = process;
    }
    state.snap = snap;
    var kept = state.points;
    (m.points || []).forEach(function (p) {
      while (kept.length && kept[kept.length - 1].timesteps >= p.timesteps) kept.pop();
      kept.push(p);
    });
    if (kept.length > POINTS_MAX) kept.splice(0, kept.length - POINTS_MAX);
    state.metricCursor = finite(m.cursor) ? m.cursor : null;
    state.logCursor = finite(l.cursor) ? l.cursor : null;
    log.add(l.lines);
    render(snap);
    return false;
  }

  function render(snap) {
    var job = snap.job || {}, progress = snap.progress || {};
    renderTop(job, progress, snap);
    renderProgress(job, progress);
    renderRecovery(snap.recovery || {});
    metrics.update(state.points, snap.cards, snap.reading, (snap.metrics || {}).keys);
    T.episodes(byId("rv-episodes"), byId("rv-episodes-count"), snap.episodes);
    renderButtons(job.status || "idle", snap.recovery || {});
    if (!snap.preview) form.showJob(state.process, job.values); // what the job in view ran with
  }

  function chip(id, value) { byId(id).querySelector(".rv-chip-value").textContent = value; }

  function renderTop(job, progress, snap) {
    var status = job.status || "idle";
    text("rv-train-summary", job.id ? "job " + job.id + (job.run ? " · run " + job.run : "") +
      " · " + status : "no job yet");
    byId("rv-chip-process").setAttribute("data-status", status);
    chip("rv-chip-process", status + (job.pid ? " (pid " + job.pid + ")" : ""));
    chip("rv-chip-progress", finite(progress.fraction) ? (100 * progress.fraction).toFixed(1) + " %"
      : "–");
    chip("rv-chip-wall", duration(job.wall_seconds));
    chip("rv-chip-device", job.device || "–");
    T.backend(job); // training-backend.js: the cluster chip and the job's own message
    byId("rv-train-preview-note").hidden = !snap.preview;
    var links = snap.links || {};
    [["rv-link-samples", links.samples], ["rv-link-stats", links.stats],
      ["rv-link-trends", links.trends]].forEach(function (pair) {
      var a = byId(pair[0]);
      a.hidden = !pair[1];
      if (pair[1]) a.href = pair[1];
    });
  }

  function renderProgress(job, progress) {
    var bar = byId("rv-train-bar"), fraction = finite(progress.fraction) ? progress.fraction : 0;
    bar.value = Math.min(Math.max(fraction, 0), 1);
    bar.setAttribute("data-fraction", fraction);
    text("rv-train-bar-text", (finite(progress.timesteps) ? progress.timesteps : "–") + " / " +
      (finite(progress.total) ? progress.total : "–") + " timesteps");
    var eta = "";
    if (finite(progress.eta_seconds) && ACTIVE[job.status]) {
      var end = new Date(Date.now() + progress.eta_seconds * 1000);
      eta = "ETA " + duration(progress.eta_seconds) + ", ends about " + end.toLocaleTimeString();
    }
    text("rv-train-eta", eta);
    text("rv-train-pid", job.pid ? String(job.pid) : "–");
    text("rv-train-throughput", finite(progress.throughput)
      ? progress.throughput.toFixed(1) + " timesteps/s" : "–");
    text("rv-train-exit", (job.exit_code === null || job.exit_code === undefined ? "–"
      : String(job.exit_code)) + (job.force_killed ? " (killed after the grace period)" : ""));
    text("rv-train-phase", progress.phase || "–");
    var phases = (progress.phases || []).slice(-PHASES_SHOWN), list = byId("rv-train-phases");
    list.replaceChildren.apply(list, phases.map(function (phase, i) {
      var item = html("li", "rv-phase rv-phase-" + phase.name);
      item.setAttribute("data-phase", phase.name);
      if (i === phases.length - 1 && ACTIVE[job.status]) item.classList.add("rv-phase-current");
      item.appendChild(html("span", "rv-phase-name", phase.name));
      item.appendChild(html("span", "rv-meta", " " + duration(phase.seconds)));
      return item;
    }));
    text("rv-train-command", job.command_line || "");
  }

  function renderRecovery(recovery) {
    var parts = [], resume = recovery.resume, box = byId("rv-train-recovery");
    if (resume) parts.push("Latest checkpoint: " + (resume.checkpoint || "?") +
      (finite(resume.timesteps) ? " at " + resume.timesteps + " timesteps" : ""));
    var checkpoints = recovery.checkpoints || [];
    if (checkpoints.length) parts.push(checkpoints.length + " checkpoint(s): " +
      checkpoints.map(function (c) { return c.name; }).join(", "));
    var forced = recovery.forced_stop, failure = recovery.failure;
    if (forced) parts.push("Killed: " + (forced.reason || "no exit within the grace period") +
      (forced.recovery && forced.recovery.checkpoint ? "; recover from " + forced.recovery.checkpoint : ""));
    if (failure) parts.push("Failed" + (finite(failure.step) ? " at step " + failure.step : "") +
      ": " + ([failure.error, failure.message].filter(Boolean).join(": ") || "see the log") +
      (failure.recovery_checkpoint ? "; saved " + failure.recovery_checkpoint : ""));
    box.replaceChildren.apply(box, parts.map(function (p) { return html("p", "", p); }));
    box.hidden = !parts.length;
  }

  // -- buttons ---------------------------------------------------------------------------
  function renderButtons(status, recovery) {
    var preview = !!state.preview, active = !!ACTIVE[status], busy = state.acting;
    var pause = byId("rv-train-pause"), held = status === "paused" || status === "pausing";
    pause.textContent = held ? "Resume" : "Pause";
    pause.setAttribute("data-action", held ? "resume" : "pause");
    pause.disabled = busy || preview || !(status === "running" || held);
    byId("rv-train-stop").disabled = busy || preview || !active || status === "stopping";
    byId("rv-train-start").disabled = busy || preview || active || !state.schema;
    byId("rv-train-resume-latest").disabled = busy || preview || active || !recovery.resume ||
      !state.schema || state.schema.resumable === false;
    form.lock(active || preview);
    byId("rv-train-locked").hidden = !active;
  }

  function message(value) {
    var box = byId("rv-train-message");
    box.textContent = value || "";
    box.hidden = !value;
  }

  // POST an action; the answer is the snapshot (taken at once) or the error shape.
  function act(url, body) {
    state.acting = true;
    renderButtons((state.snap && state.snap.job || {}).status || "idle", {});
    state.seq += 1; // an answer to a poll sent before this is stale
    clearTimeout(state.timer);
    return call(url, body).then(function (answer) {
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
    }, function (error) {
      state.acting = false;
      message("Could not reach the server: " + error.message);
      poll();
    });
  }

  function start(resumeLatest) {
    return act(main.dataset.startUrl, { values: form.values(), resume_latest: resumeLatest });
  }

  function setup() {
    byId("rv-train-refresh").addEventListener("click", restart);
    byId("rv-train-preview").addEventListener("change", function (event) {
      state.preview = event.target.value;
      restart();
    });
    byId("rv-train-pause").addEventListener("click", function (event) {
      var resume = event.currentTarget.getAttribute("data-action") === "resume";
      act(resume ? main.dataset.resumeUrl : main.dataset.pauseUrl, {});
    });
    byId("rv-train-stop").addEventListener("click", function () { act(main.dataset.stopUrl, {}); });
    byId("rv-train-resume-latest").addEventListener("click", function () { start(true); });
    byId("rv-train-form").addEventListener("submit", function (event) {
      event.preventDefault();
      start(false);
    });
    byId("rv-train-defaults").addEventListener("click", function () { form.reset(); });
  }

  function loadSchema() {
    call(main.dataset.schemaUrl).then(function (answer) {
      if (!answer.ok) throw new Error(answer.body.message || "the server answered " + answer.status);
      state.schema = answer.body;
      form.build(answer.body);
      metrics.setSchema(answer.body.metrics);
      if (state.snap) render(state.snap);
    }).catch(function (error) {
      message("Could not load the configuration schema: " + error.message + ". Retrying.");
      setTimeout(loadSchema, pollMs);
    });
  }

  function init() {
    main = byId("rv-main");
    if (!main || !main.dataset.stateUrl) return;
    var ms = parseInt(main.dataset.pollMs, 10);
    if (ms >= 1) pollMs = ms;
    form = T.form(byId("rv-train-form"), byId("rv-train-presets"));
    log = T.log({ list: byId("rv-log"), filter: byId("rv-log-filter"), errors: byId("rv-log-errors"),
      progress: byId("rv-log-progress"), follow: byId("rv-log-follow"), count: byId("rv-log-count") });
    metrics = T.metrics();
    setup();
    document.addEventListener("visibilitychange", function () {
      if (!document.hidden && state.asleep) { state.asleep = false; poll(); }
    });
    loadSchema();
    poll();
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
