// Relax Rollout Viewer: instant navigation on top of server-rendered pages.
// Every URL comes from the page (hrefs, data-* attributes, form actions): nothing here spells a
// path, so the same script works at "/", under a portal mount and behind a proxy prefix.
// Sample text only ever arrives as server-escaped HTML, parsed by DOMParser (which runs no
// script) and adopted into the page; the Content-Security-Policy forbids inline script anyway.
(function () {
  "use strict";

  var FRAGMENT_HEADER = "RV-Fragment";
  var PREFETCH_LIMIT = 24; // fragments kept; a 100 KB sample costs ~100 KB here
  var PREFETCH_MAX_AGE = 20000; // ms: a live step grows, so old fragments go stale
  var COLLAPSED_KEY = "rv-collapsed";
  var THEME_KEY = "rv-theme";

  var fragments = new Map(); // url -> {promise, time}
  var navSerial = 0;
  var rawMode = {}; // field -> true while its raw view is on (kept across samples)

  // -- storage ---------------------------------------------------------------------------
  function load(key, fallback) {
    try {
      var value = localStorage.getItem(key);
      return value === null ? fallback : JSON.parse(value);
    } catch (e) {
      return fallback;
    }
  }
  function store(key, value) {
    try {
      localStorage.setItem(key, JSON.stringify(value));
    } catch (e) {
      // Private mode or storage disabled: the choice lasts for this page only.
    }
  }

  // -- theme -----------------------------------------------------------------------------
  var systemDark = window.matchMedia ? matchMedia("(prefers-color-scheme: dark)") : null;
  function applyTheme(choice) {
    var root = document.documentElement;
    var dark = choice === "dark" || (choice === "system" && systemDark && systemDark.matches);
    root.setAttribute("data-theme-choice", choice);
    root.setAttribute("data-theme", dark ? "dark" : "light");
  }
  function setupTheme() {
    var select = document.getElementById("rv-theme");
    var choice = document.documentElement.getAttribute("data-theme-choice") || "system";
    if (select) {
      select.value = choice;
      select.addEventListener("change", function () {
        try {
          localStorage.setItem(THEME_KEY, select.value);
        } catch (e) { /* see store() */ }
        applyTheme(select.value);
      });
    }
    if (systemDark && systemDark.addEventListener) {
      systemDark.addEventListener("change", function () {
        applyTheme(document.documentElement.getAttribute("data-theme-choice") || "system");
      });
    }
  }

  // -- fragments -------------------------------------------------------------------------
  // The page at `url`, fetched as a fragment: a promise of {url, status, html}.
  // Navigation reuses a fragment prefetched in the last PREFETCH_MAX_AGE ms; `fresh` (live.js
  // re-reading the page on screen) never uses nor fills that map, nor the HTTP cache.
  function fetchFragment(url, options) {
    if (options && options.fresh) return requestFragment(url, "no-store");
    var now = Date.now();
    var entry = fragments.get(url);
    if (entry && now - entry.time < PREFETCH_MAX_AGE) return entry.promise;
    var promise = requestFragment(url, "default");
    promise.catch(function () {
      fragments.delete(url);
    });
    fragments.set(url, { promise: promise, time: now });
    while (fragments.size > PREFETCH_LIMIT) {
      fragments.delete(fragments.keys().next().value);
    }
    return promise;
  }

  function requestFragment(url, cache) {
    var headers = {};
    headers[FRAGMENT_HEADER] = "1";
    return fetch(url, {
      headers: headers,
      credentials: "same-origin",
      cache: cache,
    }).then(function (response) {
      return response.text().then(function (html) {
        // Error pages (404, 422, 503) are fragments too: their message replaces the sample.
        return { url: response.url, status: response.status, html: html };
      });
    });
  }

  function prefetchNeighbours() {
    var sample = document.getElementById("rv-sample");
    if (!sample) return;
    ["nextUrl", "prevUrl"].forEach(function (name) {
      var url = sample.dataset[name];
      if (url) fetchFragment(url).catch(function () { /* shown when navigated to */ });
    });
  }

  // live.js fires this when the shown step grew: prefetched neighbours hold the old totals.
  document.addEventListener("rv:grown", function () {
    fragments.clear();
    prefetchNeighbours();
  });

  function parseMain(html) {
    var doc = new DOMParser().parseFromString(html, "text/html");
    return doc.getElementById("rv-main");
  }

  function showOffline(on) {
    var banner = document.getElementById("rv-offline");
    if (banner) banner.hidden = !on;
  }

  // Replace <main> with the page at `url`. `how`: "push" (new history entry), "replace", "pop".
  function navigate(url, how, startMark) {
    var serial = ++navSerial;
    var mark = startMark || markStart();
    return fetchFragment(url).then(
      function (result) {
        if (serial !== navSerial) return; // a later navigation won
        var main = parseMain(result.html);
        if (!main) {
          // Not one of our fragments (a proxy's error page, say): let the browser show it.
          window.location.assign(url);
          return;
        }
        showOffline(false);
        swapMain(main);
        var finalUrl = main.getAttribute("data-page-url") || result.url;
        if (how === "push") history.pushState({ rv: true }, "", finalUrl);
        else if (how === "replace") history.replaceState({ rv: true }, "", finalUrl);
        measure(mark);
      },
      function () {
        if (serial !== navSerial) return;
        showOffline(true);
      }
    );
  }

  function markStart() {
    var name = "rv-nav-start-" + navSerial;
    if (window.performance && performance.mark) performance.mark(name);
    return name;
  }
  function measure(startName) {
    if (!(window.performance && performance.measure)) return;
    try {
      performance.measure("rv-nav", startName);
    } catch (e) { /* the start mark was cleared; nothing to record */ }
  }

  function swapMain(newMain) {
    var old = document.getElementById("rv-main");
    var adopted = document.adoptNode(newMain);
    old.replaceWith(adopted);
    var title = adopted.getAttribute("data-title");
    if (title) document.title = title;
    setupMain();
  }

  // -- the swappable region --------------------------------------------------------------
  function setupMain() {
    var main = document.getElementById("rv-main");
    if (!main) return;
    var collapsed = load(COLLAPSED_KEY, []);
    main.querySelectorAll(".rv-section").forEach(function (section) {
      var field = section.getAttribute("data-field");
      setCollapsed(section, collapsed.indexOf(field) >= 0);
      if (rawMode[field]) setRaw(section, true);
    });
    // The end of a generation is what people read first.
    main.querySelectorAll(".rv-text").forEach(function (box) {
      box.scrollTop = box.scrollHeight;
    });
    prefetchNeighbours();
  }

  function setCollapsed(section, collapsed) {
    var button = section.querySelector(".rv-collapse");
    var body = section.querySelector(".rv-section-body");
    if (!button || !body) return;
    body.hidden = collapsed;
    button.setAttribute("aria-expanded", collapsed ? "false" : "true");
    section.classList.toggle("rv-collapsed", collapsed);
  }

  function setRaw(section, on) {
    var raw = section.querySelector(".rv-raw");
    var formatted = section.querySelector(".rv-formatted");
    var button = section.querySelector(".rv-raw-toggle");
    if (!raw || !formatted) return;
    raw.hidden = !on;
    formatted.hidden = on;
    if (button) button.setAttribute("aria-pressed", on ? "true" : "false");
  }

  function copyText(text, button) {
    function done(ok) {
      var label = button.textContent;
      button.textContent = ok ? "copied" : "copy failed";
      setTimeout(function () { button.textContent = label; }, 1200);
    }
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(function () { done(true); }, function () { done(false); });
      return;
    }
    // Plain http behind a proxy is not a secure context: fall back to a selection copy.
    var area = document.createElement("textarea");
    area.value = text;
    area.setAttribute("readonly", "");
    area.className = "rv-offscreen";
    document.body.appendChild(area);
    area.select();
    var ok = false;
    try {
      ok = document.execCommand("copy");
    } catch (e) { /* unsupported */ }
    area.remove();
    done(ok);
  }

  // Delegated clicks: the buttons live in <main>, which is replaced on every navigation.
  document.addEventListener("click", function (event) {
    var target = event.target;
    if (!(target instanceof Element)) return;
    var section = target.closest(".rv-section");
    if (section && target.closest(".rv-collapse")) {
      var field = section.getAttribute("data-field");
      var collapsed = load(COLLAPSED_KEY, []).filter(function (f) { return f !== field; });
      var nowCollapsed = !section.classList.contains("rv-collapsed");
      if (nowCollapsed) collapsed.push(field);
      store(COLLAPSED_KEY, collapsed);
      setCollapsed(section, nowCollapsed);
      return;
    }
    if (section && target.closest(".rv-raw-toggle")) {
      var name = section.getAttribute("data-field");
      rawMode[name] = !rawMode[name];
      setRaw(section, rawMode[name]);
      return;
    }
    if (section && target.closest(".rv-copy")) {
      var raw = section.querySelector(".rv-raw");
      if (raw) copyText(raw.textContent, target.closest(".rv-copy"));
      return;
    }
    if (section && target.closest(".rv-to-start")) {
      var box = section.querySelector(".rv-text");
      if (box) box.scrollTop = 0;
      return;
    }
    var link = target.closest("a[href]");
    if (link && isInMain(link) && isPlainClick(event) && (link.id === "rv-prev" ||
        link.id === "rv-next" || link.id === "rv-jump-prev" || link.id === "rv-jump-next")) {
      event.preventDefault();
      navigate(link.href, "push");
    }
  });

  function isInMain(element) {
    return !!element.closest("#rv-main");
  }
  function isPlainClick(event) {
    return event.button === 0 && !event.ctrlKey && !event.metaKey && !event.shiftKey && !event.altKey;
  }

  // -- controls --------------------------------------------------------------------------
  function formUrl(form) {
    var url = new URL(form.action, window.location.href);
    var params = new URLSearchParams();
    new FormData(form).forEach(function (value, key) {
      if (value !== "" && !(key === "order" && value === "asc")) params.append(key, value);
    });
    url.search = params.toString();
    return url.toString();
  }

  document.addEventListener("change", function (event) {
    var target = event.target;
    if (!(target instanceof Element)) return;
    if (target.id === "rv-step") {
      var url = target.value;
      if (!url) return;
      // Keep sort and filters when moving to another step; `i` is per-step, drop it.
      var params = new URLSearchParams(window.location.search);
      params.delete("i");
      var query = params.toString();
      window.location.assign(url + (query ? "?" + query : ""));
      return;
    }
    var controls = target.closest("#rv-controls");
    if (controls) navigate(formUrl(controls), "push");
  });

  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (!(form instanceof HTMLFormElement)) return;
    if (form.id === "rv-jump-form" || form.id === "rv-controls") {
      event.preventDefault();
      navigate(formUrl(form), "push").then(function () {
        var input = document.getElementById("rv-jump-input");
        if (input) input.blur();
      });
    }
  });

  // -- keyboard --------------------------------------------------------------------------
  var KEYS = { ArrowRight: "nextUrl", j: "nextUrl", ArrowLeft: "prevUrl", k: "prevUrl",
    Home: "firstUrl", End: "lastUrl" };

  function isTyping(element) {
    if (!element) return false;
    var tag = element.tagName;
    return tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA" || element.isContentEditable;
  }

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.altKey || event.metaKey || event.defaultPrevented) return;
    if (isTyping(document.activeElement)) return;
    var which = KEYS[event.key];
    if (!which) return;
    // Home/End inside a focused text box scroll that box, as they would anywhere else.
    if ((event.key === "Home" || event.key === "End") && document.activeElement &&
        document.activeElement.closest && document.activeElement.closest(".rv-text")) return;
    var sample = document.getElementById("rv-sample");
    var url = sample && sample.dataset[which];
    if (!url) return;
    event.preventDefault();
    if (url === document.getElementById("rv-main").getAttribute("data-page-url")) return;
    navigate(url, "push", markStart());
  });

  window.addEventListener("popstate", function () {
    // Within one step only <main> changes; another step (or bucket) has another header.
    var main = document.getElementById("rv-main");
    var stepUrl = main && main.getAttribute("data-step-url");
    if (!stepUrl || window.location.pathname.indexOf(new URL(stepUrl, window.location.href).pathname) !== 0) {
      window.location.reload();
      return;
    }
    navigate(window.location.href, "pop");
  });

  // -- shared with live.js and the page scripts (all deferred, so they run after this one) --
  var DEFAULT_POLL_MS = 3000;
  // The server's poll interval (data-poll-ms on the header), in ms; 3000 when missing or bad.
  function pollMs() {
    var header = document.getElementById("rv-header");
    var raw = header ? header.getAttribute("data-poll-ms") : null;
    var value = /^\d+$/.test(raw || "") ? parseInt(raw, 10) : 0;
    return value >= 1 ? value : DEFAULT_POLL_MS;
  }
  window.rv = {
    storage: { load: load, store: store },
    fetchFragment: fetchFragment,
    pollMs: pollMs,
  };

  function init() {
    setupTheme();
    setupMain();
    history.replaceState({ rv: true }, "", window.location.href);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
