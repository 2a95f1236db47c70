// Relax Rollout Viewer: a page's swappable <main>, fetched as a fragment (the RV-Fragment
// header), for instant navigation. Fragments fetched ahead (the neighbours of a sample) are kept
// a short while; the page being read again (a growing step) is always fetched fresh.

const FRAGMENT_HEADER = "RV-Fragment";
const PREFETCH_LIMIT = 24; // fragments kept; a 100 KB sample costs ~100 KB here
const PREFETCH_MAX_AGE = 20000; // ms: a live step grows, so old fragments go stale

const fragments = new Map(); // url -> {promise, time}

// The page at `url`, fetched as a fragment: a promise of {url, status, html}.
// Navigation reuses a fragment prefetched in the last PREFETCH_MAX_AGE ms; `fresh` (live.js
// re-reading the page on screen) never uses nor fills that map, nor the HTTP cache.
export function fetchFragment(url, options) {
  if (options?.fresh) return requestFragment(url, "no-store");
  const now = Date.now();
  const entry = fragments.get(url);
  if (entry && now - entry.time < PREFETCH_MAX_AGE) return entry.promise;
  const promise = requestFragment(url, "default");
  promise.catch(() => {
    fragments.delete(url);
  });
  fragments.set(url, { promise, time: now });
  while (fragments.size > PREFETCH_LIMIT) {
    fragments.delete(fragments.keys().next().value);
  }
  return promise;
}

// Drop the fragments prefetched for navigation (the step grew: they hold the old totals).
export function forgetPrefetched() {
  fragments.clear();
}

function requestFragment(url, cache) {
  return fetch(url, {
    headers: { [FRAGMENT_HEADER]: "1" },
    credentials: "same-origin",
    cache,
  }).then((response) =>
    response.text().then((html) => {
      // Error pages (404, 422, 503) are fragments too: their message replaces the sample.
      return { url: response.url, status: response.status, html };
    }),
  );
}

// The <main id="rv-main"> of a fetched page, or null. DOMParser runs no script: server-escaped
// HTML stays text until it is adopted into the page.
export function parseMain(html) {
  return new DOMParser().parseFromString(html, "text/html").getElementById("rv-main");
}
