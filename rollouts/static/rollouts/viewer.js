// Relax Rollout Viewer: instant navigation on top of server-rendered pages.
// Every URL comes from the page (hrefs, data-* attributes, form actions): nothing here spells a
// path, so the same script works at "/", under a portal mount and behind a proxy prefix.
// Sample text only ever arrives as server-escaped HTML, parsed by DOMParser (which runs no
// script) and adopted into the page; the Content-Security-Policy forbids inline script anyway.
(function () {
  "use strict";

  var COLLAPSED_KEY = "rv-collapsed";

  var rv = window.rv; // shared.js: storage, fragments
  var fetchFragment = rv.fetchFragment;
  var load = rv.storage.load;
  var store = rv.storage.store;
  var navSerial = 0;
  var rawMode = {}; // field -> true while its raw view is on (kept across samples)

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
    rv.forgetPrefetched();
    prefetchNeighbours();
  });

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
        var main = rv.parseMain(result.html);
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
    loadTokensCard(main);
    document.dispatchEvent(new CustomEvent("rv:main")); // readable.js: reading mode, think blocks
  }

  // The tokens card comes after the page (its own URL, as a fragment): it sits below the
  // response and costs as much to build as a long response's text. On failure the card's own
  // link stays, and opens the page with the card in it.
  function loadTokensCard(main) {
    var card = main.querySelector("#rv-tokens[data-tokens-url]");
    if (!card) return;
    var serial = navSerial;
    rv.fetchFragment(card.getAttribute("data-tokens-url")).then(function (result) {
      if (serial !== navSerial || !card.isConnected || result.status !== 200) return;
      var parsed = new DOMParser().parseFromString(result.html, "text/html");
      var loaded = parsed.getElementById("rv-tokens");
      if (loaded) card.replaceWith(document.adoptNode(loaded));
    }, function () { /* the link stays */ });
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

  function init() {
    setupMain();
    history.replaceState({ rv: true }, "", window.location.href);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
