// Relax Rollout Viewer: what TensorBoard's scalar charts offer, for chart.js's line chart: a log
// value axis, drag to zoom on the steps (double-click or Escape resets; "[" and "]" on the
// focused chart zoom from and to the step under the crosshair), a step or wall-clock x axis, and
// a download of the chart as PNG (its colours as the theme shows them) and of its data as CSV.
//
//   const tools = createTools({
//     log, xAxis, unzoom, png, csv, note: the controls' elements (a checkbox, a select with
//       "step" and "wall" options, three buttons, a status line);
//     name: function () -> a download's file name without its extension;
//     remember: true: the view is kept in the page's URL (?yscale=log&xaxis=wall&zoom=10-20)
//   });
//   createChart(svgElement, {..., tools: tools});
//   pageTools(name, remember): the same on the controls of _chart.html, found by their ids.
// The arithmetic (log ticks, time ticks, the zoomed points, the CSV) is lib/axes.js. Nothing sets
// an inline style: the brush is an SVG rect with a class (rv-brush in trends.css).
import { chartScales, csvOf, parseZoom, zoomIndices } from "./lib/axes.js";
import { byId, svg as svgNode } from "./lib/dom.js";
import { finite } from "./lib/numbers.js";
import { replaceParam } from "./lib/url.js";

const DRAG_PX = 5; // a press that moves less than this is a click, not a brush
const DOUBLE_MS = 300; // a click on a zoomed chart waits this long for a second one
// Properties a PNG's SVG copy takes from the page as presentation attributes.
const PAINT = [
  "fill",
  "fill-opacity",
  "stroke",
  "stroke-width",
  "stroke-dasharray",
  "stroke-opacity",
  "stroke-linecap",
  "stroke-linejoin",
  "paint-order",
  "opacity",
  "font-family",
  "font-size",
  "font-weight",
];

export function createTools(opts) {
  const params = new URLSearchParams(window.location.search);
  const state = {
    log: opts.remember && params.get("yscale") === "log",
    wall: opts.remember && params.get("xaxis") === "wall",
    zoom: opts.remember ? parseZoom(params.get("zoom")) : null,
  };
  let view = { points: [], lines: [] }; // what is drawn, before the log scale: the CSV
  let drawnScale = null;
  let drawnPoints = [];
  let chart = null;
  let redraw = () => {};
  let hovered = () => null;

  opts.log.checked = state.log;
  opts.xAxis.value = state.wall ? "wall" : "step";
  opts.unzoom.disabled = !state.zoom;

  function remember(name, value) {
    if (opts.remember) replaceParam(name, value);
  }

  // The points and lines inside the zoom, without the values a log axis cannot draw.
  function prepare(points, lines, refs) {
    let kept = zoomIndices(points, state.zoom);
    if (state.zoom && kept.length < 2) kept = zoomIndices(points, null); // nothing left in it
    const shown = kept.map((i) => points[i]);
    view = {
      points: shown,
      lines: lines.map((l) => Object.assign({}, l, { values: kept.map((i) => l.values[i]) })),
    };
    const timed = shown.length > 0 && shown.every((p) => finite(p.wall_time));
    opts.xAxis.querySelector('option[value="wall"]').disabled = !timed;
    const notes = [];
    if (state.wall && !timed) notes.push("wall clock: these points carry no time; x is the step");
    let skipped = 0;
    let drawn = view.lines;
    let drawnRefs = refs;
    if (state.log) {
      drawn = drawn.map((l) =>
        Object.assign({}, l, {
          values: l.values.map((v) => {
            if (finite(v) && v <= 0) skipped += 1;
            return finite(v) && v > 0 ? v : null;
          }),
        }),
      );
      drawnRefs = refs.filter((r) => r.value > 0);
    }
    if (skipped) {
      notes.push(
        "log scale: " + skipped + " value" + (skipped === 1 ? "" : "s") + " ≤ 0 not drawn",
      );
    }
    opts.note.textContent = notes.join("; ");
    state.timed = timed;
    return [shown, drawn, drawnRefs];
  }

  function scales(points, values, width, height) {
    const xOf = state.wall && state.timed ? (p) => p.wall_time : null;
    return chartScales(points, values, width, height, { log: state.log, xOf: xOf });
  }

  function drawn(scale, points) {
    drawnScale = scale;
    drawnPoints = points;
    chart.setAttribute("data-yscale", scale.log ? "log" : "linear");
    chart.setAttribute("data-xaxis", scale.xName ? "wall" : "step");
    chart.setAttribute("data-zoom", state.zoom ? state.zoom.join("-") : "");
  }

  function setZoom(range) {
    state.zoom = range;
    opts.unzoom.disabled = !range;
    remember("zoom", range ? range.join("-") : null);
    redraw();
  }

  // -- drag to zoom, double-click to reset -----------------------------------------------------
  let press = null; // {x, brush}
  let swallow = false; // the click that ends a drag opens nothing
  let held = null; // a click on a zoomed chart, waiting for a second one
  let passing = false;
  function chartX(event) {
    const matrix = chart.getScreenCTM();
    return matrix
      ? new DOMPoint(event.clientX, event.clientY).matrixTransform(matrix.inverse()).x
      : 0;
  }
  function onDown(event) {
    if (event.button !== 0 || !drawnScale) return;
    press = { x: chartX(event), brush: null, id: event.pointerId };
  }
  function onMove(event) {
    if (!press) return;
    const x = chartX(event);
    if (!press.brush && Math.abs(x - press.x) < DRAG_PX) return;
    if (!press.brush) {
      chart.setPointerCapture(press.id);
      press.brush = svgNode("rect", { class: "rv-brush", y: 14, height: 1 }, chart);
      press.brush.setAttribute("height", Math.max(drawnScale.bottom - 14, 1));
    }
    const left = Math.max(Math.min(x, press.x), drawnScale.left);
    const right = Math.min(Math.max(x, press.x), drawnScale.right);
    press.brush.setAttribute("x", left.toFixed(1));
    press.brush.setAttribute("width", Math.max(right - left, 0).toFixed(1));
  }
  function onUp(event) {
    if (!press) return;
    const brush = press.brush;
    const from = press.x;
    press = null;
    if (!brush) return;
    swallow = true;
    brush.remove();
    const x = chartX(event);
    const lo = Math.min(from, x);
    const hi = Math.max(from, x);
    const inside = drawnPoints.filter((p) => {
      const at = drawnScale.x(p.step);
      return at >= lo && at <= hi;
    });
    if (inside.length >= 2) setZoom([inside[0].step, inside[inside.length - 1].step]);
  }
  function onClick(event) {
    if (passing) {
      passing = false;
      return;
    }
    const stop = () => {
      event.preventDefault();
      event.stopPropagation();
    };
    if (swallow) {
      swallow = false;
      return stop();
    }
    if (!state.zoom || event.target.closest("a")) return;
    stop(); // a second click may follow: the first opens its step only when none does
    clearTimeout(held);
    if (event.detail >= 2) return;
    const at = { clientX: event.clientX, clientY: event.clientY, bubbles: true };
    held = setTimeout(() => {
      passing = true;
      chart.dispatchEvent(new MouseEvent("click", at));
    }, DOUBLE_MS);
  }
  let zoomFrom = null;
  function onKey(event) {
    if (event.key === "Escape" && state.zoom) {
      event.preventDefault();
      setZoom(null);
    } else if (event.key === "[" || event.key === "]") {
      const step = hovered();
      if (step === null) return;
      event.preventDefault();
      if (event.key === "[") zoomFrom = step;
      else if (zoomFrom !== null && zoomFrom < step) setZoom([zoomFrom, step]);
    }
  }

  // -- downloads --------------------------------------------------------------------------------
  function fileName(extension) {
    const base = String(opts.name ? opts.name() : "chart").replace(/[^A-Za-z0-9_.-]+/g, "_");
    return (base || "chart") + "." + extension;
  }
  function save(blob, name) {
    const link = document.createElement("a");
    link.href = URL.createObjectURL(blob);
    link.download = name;
    link.hidden = true;
    document.body.appendChild(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(link.href), 10000);
  }
  function downloadCsv() {
    save(new Blob([csvOf(view.points, view.lines)], { type: "text/csv" }), fileName("csv"));
  }
  // The chart as drawn, its CSS resolved into attributes (the theme's colours), on its background.
  function downloadPng() {
    const box = chart.viewBox.baseVal;
    const copy = chart.cloneNode(true);
    const from = chart.querySelectorAll("*");
    const to = copy.querySelectorAll("*");
    from.forEach((node, i) => {
      const style = getComputedStyle(node);
      if (style.display === "none" || style.visibility === "hidden") {
        to[i].setAttribute("data-drop", "");
        return;
      }
      PAINT.forEach((name) => {
        to[i].setAttribute(name, style.getPropertyValue(name));
      });
    });
    copy.querySelectorAll("[data-drop], foreignObject, .rv-brush").forEach((n) => {
      n.remove();
    });
    copy.setAttribute("width", box.width);
    copy.setAttribute("height", box.height);
    const back = svgNode("rect", { width: "100%", height: "100%", fill: background(chart) });
    copy.insertBefore(back, copy.firstChild);
    const xml = new XMLSerializer().serializeToString(copy);
    const image = new Image();
    image.onload = () => {
      const canvas = document.createElement("canvas");
      canvas.width = box.width * 2; // twice the pixels: sharp on a high-density screen
      canvas.height = box.height * 2;
      const context = canvas.getContext("2d");
      context.scale(2, 2);
      context.drawImage(image, 0, 0, box.width, box.height);
      canvas.toBlob((blob) => {
        if (blob) save(blob, fileName("png"));
      }, "image/png");
    };
    image.src = "data:image/svg+xml;charset=utf-8," + encodeURIComponent(xml);
  }
  function background(node) {
    for (let at = node; at && at.nodeType === 1; at = at.parentNode) {
      const colour = getComputedStyle(at).backgroundColor;
      if (colour && colour !== "transparent" && colour !== "rgba(0, 0, 0, 0)") return colour;
    }
    return "white";
  }

  // createChart calls this once it exists: `again` redraws it as last drawn.
  function attach(svgChart, again, hover) {
    chart = svgChart;
    redraw = again;
    hovered = hover;
    opts.log.addEventListener("change", () => {
      state.log = opts.log.checked;
      remember("yscale", state.log ? "log" : null);
      redraw();
    });
    opts.xAxis.addEventListener("change", () => {
      state.wall = opts.xAxis.value === "wall";
      remember("xaxis", state.wall ? "wall" : null);
      redraw();
    });
    opts.unzoom.addEventListener("click", () => {
      setZoom(null);
    });
    opts.csv.addEventListener("click", downloadCsv);
    opts.png.addEventListener("click", downloadPng);
    chart.addEventListener("pointerdown", onDown);
    chart.addEventListener("pointermove", onMove);
    chart.addEventListener("pointerup", onUp);
    chart.addEventListener("pointercancel", () => {
      if (press?.brush) press.brush.remove();
      press = null;
    });
    chart.addEventListener("click", onClick, true);
    chart.addEventListener("dblclick", (event) => {
      if (!state.zoom) return;
      event.preventDefault();
      clearTimeout(held);
      setZoom(null);
    });
    chart.addEventListener("keydown", onKey);
  }

  return { prepare: prepare, scales: scales, drawn: drawn, attach: attach };
}

// The tools on the controls of _chart.html (the trends page's and the Training page's curve).
export function pageTools(name, remember) {
  return createTools({
    log: byId("rv-chart-log"),
    xAxis: byId("rv-chart-x"),
    unzoom: byId("rv-chart-unzoom"),
    png: byId("rv-chart-png"),
    csv: byId("rv-chart-csv"),
    note: byId("rv-chart-note"),
    name: name,
    remember: remember,
  });
}
