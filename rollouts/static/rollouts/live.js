// Relax Rollout Viewer: live updates while a run is still writing its step files.
// The header carries everything this needs (data-poll-url, data-poll-ms, the cursor in
// data-latest-*, the shown step in data-step*): a small JSON poll every data-poll-ms says what
// changed since that cursor, new steps join the step selector, "Follow latest" moves to the
// newest step, and a step that grew under the page is handed to grown.js.
// This is the only code that asks the poll endpoint: every answer is announced on document as
// an "rv:poll" event (the parsed body in event.detail), so a page script keeps its own parts
// current from the same answers (trends.js: the curves) instead of polling a second time.
import { applyGrown } from "./grown.js";
import { pollMs as serverPollMs } from "./lib/poll.js";
import { load, store } from "./lib/storage.js";
import { carryQuery } from "./lib/url.js";

const FOLLOW_KEY = "rv-follow"; // localStorage: "Follow latest" survives reloads and steps
const FOLLOW_PAGES = { sample: true, stats: true }; // pages that move to a newer step
const POLL_EVENT = "rv:poll"; // fired on document with every poll answer

let header = null;
let pollMs = 3000; // from the end of one poll to the next; init() reads data-poll-ms
let timer = null;
let busy = false; // a poll (and any refresh it started) is in flight: never overlap
let watching = true; // false once the shown step is gone: the bucket is still polled
let stopped = false; // the page is leaving: no more polls

// -- the step selector -----------------------------------------------------------------
function stepSelect() {
  return document.getElementById("rv-step");
}

function stepOptions() {
  const select = stepSelect();
  if (!select) return [];
  return Array.prototype.filter.call(select.options, (option) => option.hasAttribute("data-step"));
}

function optionText(step) {
  return "Step " + step.step + " (" + step.size + ")";
}

// True when step `a` (number, name) sorts after `b`, as the server sorts step files.
function sortsAfter(aStep, aName, bStep, bName) {
  return aStep > bStep || (aStep === bStep && aName > bName);
}

// Add new steps in numeric order, refresh the size of known ones; the steps added.
function mergeSteps(steps) {
  const select = stepSelect();
  const added = [];
  if (!select) return added;
  steps.forEach((step) => {
    const options = stepOptions();
    const known = options.find((option) => option.getAttribute("data-name") === step.name);
    if (known) {
      known.setAttribute("data-size-bytes", String(step.size_bytes));
      known.textContent = optionText(step);
      return;
    }
    const option = document.createElement("option");
    option.value = step.url;
    option.setAttribute("data-step", String(step.step));
    option.setAttribute("data-name", step.name);
    option.setAttribute("data-size-bytes", String(step.size_bytes));
    option.textContent = optionText(step);
    const before = options.find((other) =>
      sortsAfter(
        Number(other.getAttribute("data-step")),
        other.getAttribute("data-name"),
        step.step,
        step.name,
      ),
    );
    select.insertBefore(option, before || null);
    added.push(step);
  });
  return added;
}

function newestOption() {
  const options = stepOptions();
  return options.length ? options[options.length - 1] : null;
}

// -- follow latest ---------------------------------------------------------------------
function followBox() {
  return document.getElementById("rv-follow");
}

function following() {
  const box = followBox();
  return !!box && box.checked;
}

// Where the newest step's version of this page lives; null when this page does not follow.
function followUrl(option) {
  const page = header.getAttribute("data-page");
  if (!FOLLOW_PAGES[page]) return null;
  const shown = header.getAttribute("data-step");
  if (shown === null || !option) return null;
  if (
    !sortsAfter(
      Number(option.getAttribute("data-step")),
      option.getAttribute("data-name"),
      Number(shown),
      shown,
    )
  )
    return null;
  const stepUrl = option.value;
  if (page === "stats") {
    // The stats link is the shown step's URL plus a suffix: the newest step's is the same.
    const samples = document.getElementById("rv-samples-link");
    const stats = document.getElementById("rv-stats-link");
    if (!samples || !stats) return null;
    const base = samples.getAttribute("href");
    const own = stats.getAttribute("href");
    if (!base || !own || own.indexOf(base) !== 0) return null;
    return stepUrl + own.slice(base.length);
  }
  // Keep sort and filters, as the step selector does; `i` is per-step, drop it.
  return carryQuery(stepUrl, window.location.search, ["i"]);
}

// Go to the newest step when following; true when the page is leaving.
function followNewest() {
  if (!following()) return false;
  const url = followUrl(newestOption());
  if (!url) return false;
  stop();
  window.location.assign(url);
  return true;
}

function setupFollow() {
  const box = followBox();
  if (!box) return;
  box.checked = load(FOLLOW_KEY, false) === true;
  box.addEventListener("change", () => {
    store(FOLLOW_KEY, box.checked);
    if (box.checked) followNewest();
  });
}

// -- polling ---------------------------------------------------------------------------
function pollUrl() {
  const url = new URL(header.getAttribute("data-poll-url"), window.location.href);
  const after = header.getAttribute("data-latest-step");
  if (after !== null) {
    url.searchParams.set("after", after);
    url.searchParams.set("size", header.getAttribute("data-latest-size") || "");
  }
  const step = header.getAttribute("data-step");
  if (watching && step !== null) {
    url.searchParams.set("watch", step);
    url.searchParams.set("watch_size", header.getAttribute("data-step-size") || "");
  }
  return url.toString();
}

function readPoll(response) {
  return response.json().then((body) => {
    if (!response.ok) return null;
    document.dispatchEvent(new CustomEvent(POLL_EVENT, { detail: body }));
    return body;
  });
}

function apply(body) {
  if (!body?.changed) return Promise.resolve();
  if (body.cursor) {
    header.setAttribute("data-latest-step", String(body.cursor.after));
    header.setAttribute("data-latest-size", String(body.cursor.size));
  }
  const steps = body.steps || [];
  if (
    steps.length &&
    !stepSelect() &&
    !header.hasAttribute("data-step") &&
    header.getAttribute("data-page") === "sample"
  ) {
    // The bucket was empty, so the page is only a message: its first step is the page now.
    stop();
    window.location.reload();
    return Promise.resolve();
  }
  if (mergeSteps(steps).length && followNewest()) return Promise.resolve();
  const watched = body.watched;
  if (!watched || watched.name !== header.getAttribute("data-step")) return Promise.resolve();
  if (watched.deleted) {
    // The shown step was deleted (or renamed): stop watching it, keep polling the bucket.
    watching = false;
    return Promise.resolve();
  }
  return applyGrown(header, watched).then((reloading) => {
    if (reloading) stop();
  });
}

function poll() {
  timer = null;
  if (busy || document.visibilityState !== "visible") return;
  busy = true;
  fetch(pollUrl(), {
    headers: { Accept: "application/json" },
    credentials: "same-origin",
    cache: "no-store",
  })
    .then(readPoll)
    .then(apply)
    .catch(() => {
      // Server down or a broken answer: the next tick tries again. Navigation failures
      // already show viewer.js's offline banner; a background poll says nothing.
    })
    .then(() => {
      busy = false;
      schedule();
    });
}

function schedule() {
  if (timer !== null || busy || stopped) return;
  if (document.visibilityState === "visible") timer = setTimeout(poll, pollMs);
}

function stop() {
  stopped = true;
  if (timer !== null) clearTimeout(timer);
  timer = null;
}

function pollNow() {
  if (stopped) return;
  if (timer !== null) clearTimeout(timer);
  timer = null;
  poll();
}

export function startLive() {
  header = document.getElementById("rv-header");
  if (!header?.getAttribute("data-poll-url")) return; // not a page of a bucket
  pollMs = serverPollMs();
  setupFollow();
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "visible") {
      pollNow();
    } else if (timer !== null) {
      clearTimeout(timer);
      timer = null;
    }
  });
  // Back/forward cache: the page comes back as it was left, possibly minutes ago.
  window.addEventListener("pageshow", (event) => {
    if (event.persisted) {
      stopped = false;
      pollNow();
    }
  });
  schedule();
}
