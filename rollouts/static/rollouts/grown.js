// Relax Rollout Viewer: what a page does when live.js's poll says the step it shows has grown.
// The sample page refreshes its counts, links and notes in place (the sample being read stays);
// pages that summarise the step (stats, a group) say it grew and offer a reload. Either way the
// header's data-step-size moves on, and "rv:grown" tells viewer.js its prefetched neighbours
// are stale. applyGrown(header, watched) -> a promise of true when the page reloads.
import { fetchFragment, parseMain } from "./lib/fragments.js";

const GROWN_EVENT = "rv:grown"; // fired on document when the shown step grew

// -- a growing step --------------------------------------------------------------------
// Copy what counts from a fresh fragment of this very sample into the page: the position,
// the navigation links and the notes above the sample. The sample itself is left alone.
function refreshCounts(main, fresh) {
  const sample = document.getElementById("rv-sample");
  const freshSample = fresh.querySelector("#rv-sample");
  if (!sample || !freshSample) return;
  if (sample.getAttribute("data-position") !== freshSample.getAttribute("data-position")) {
    return; // the fragment shows another sample (filters moved it): leave the page alone
  }
  Array.prototype.slice.call(sample.attributes).forEach((attribute) => {
    if (attribute.name.indexOf("data-") === 0 && !freshSample.hasAttribute(attribute.name)) {
      sample.removeAttribute(attribute.name);
    }
  });
  Array.prototype.forEach.call(freshSample.attributes, (attribute) => {
    if (attribute.name.indexOf("data-") === 0) sample.setAttribute(attribute.name, attribute.value);
  });
  ["rv-position", "rv-jump-count"].forEach((id) => {
    const live = document.getElementById(id);
    const source = fresh.querySelector("#" + id);
    if (live && source) live.textContent = source.textContent;
  });
  const input = document.getElementById("rv-jump-input");
  const freshInput = fresh.querySelector("#rv-jump-input");
  if (input && freshInput) input.max = freshInput.max;
  // The links may turn from disabled to enabled: the whole element changes, not an href.
  ["rv-prev", "rv-next", "rv-jump-prev", "rv-jump-next"].forEach((id) => {
    const live = document.getElementById(id);
    const source = fresh.querySelector("#" + id);
    if (live && source) live.replaceWith(document.adoptNode(source));
  });
  replaceNotes(main, fresh);
}

// The notes right inside <main>: indexing, unreadable lines, a line still being written.
function notesOf(main) {
  return Array.prototype.filter.call(main.children, (child) =>
    child.matches(".rv-note, .rv-warning"),
  );
}

function replaceNotes(main, fresh) {
  const anchor = main.querySelector(":scope > .rv-error, :scope > #rv-sample");
  notesOf(main).forEach((note) => {
    note.remove();
  });
  notesOf(fresh).forEach((note) => {
    main.insertBefore(document.adoptNode(note), anchor);
  });
}

// This very page, read again: never the prefetched copy viewer.js navigates with.
function fetchFresh(url) {
  return fetchFragment(url, { fresh: true }).then((result) => parseMain(result.html));
}

// The sample page: refresh its counts in place (the data-step-size moves only on success,
// so a failed refresh is tried again on the next poll).
function refreshSamplePage(header, watched) {
  const main = document.getElementById("rv-main");
  if (!main) return Promise.resolve(false);
  const url = main.getAttribute("data-page-url") || window.location.href;
  return fetchFresh(url).then((fresh) => {
    if (!fresh || document.getElementById("rv-main") !== main) return false; // navigated
    if (!document.getElementById("rv-sample")) {
      // Nothing was on screen (the step had no complete line yet): show what there is now.
      if (fresh.querySelector("#rv-sample")) {
        window.location.reload();
        return true;
      }
      replaceNotes(main, fresh);
    } else {
      refreshCounts(main, fresh);
    }
    // Even when the fragment showed another sample: the step is not fetched again until
    // it grows again.
    grown(header, watched);
    return false;
  });
}

// Pages that summarise the step (stats, a group): say it grew, and let the reader reload.
function showGrownNotice(header, watched) {
  const main = document.getElementById("rv-main");
  if (!main) return;
  let notice = main.querySelector(".rv-grown-notice");
  if (!notice) {
    notice = document.createElement("p");
    notice.className = "rv-note rv-grown-notice";
    notice.setAttribute("role", "status");
    notice.appendChild(document.createElement("span"));
    notice.appendChild(document.createTextNode(" "));
    const link = document.createElement("a");
    link.className = "rv-grown-reload";
    link.textContent = "Reload";
    notice.appendChild(link);
    const toolbar = main.querySelector(":scope > .rv-toolbar");
    main.insertBefore(notice, toolbar ? toolbar.nextSibling : main.firstChild);
  }
  notice.querySelector("a").href = window.location.href;
  notice.querySelector("span").textContent =
    "Step " +
    watched.name +
    " has grown since this page was loaded (" +
    watched.records +
    " record" +
    (watched.records === 1 ? "" : "s") +
    " now).";
  grown(header, watched);
}

function grown(header, watched) {
  header.setAttribute("data-step-size", String(watched.size_bytes));
  document.dispatchEvent(new CustomEvent(GROWN_EVENT, { detail: watched }));
}

// The step shown under `header` grew (`watched`: the poll's word on it).
export function applyGrown(header, watched) {
  if (header.getAttribute("data-page") === "sample") return refreshSamplePage(header, watched);
  showGrownNotice(header, watched);
  return Promise.resolve(false);
}
