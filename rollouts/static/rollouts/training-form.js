// Relax Rollout Viewer: the Training page's configuration form, generated from the schema
// (GET api/train/schema): one fieldset per group, an input per field by its type (int, float,
// bool, string, choice, path) with its min/max and help, the presets as buttons, and each bad
// field's message from a 409 next to it. The form does not judge values itself (`novalidate`):
// the server checks against the same schema, so the two cannot disagree.
//
//   const form = createForm(formElement, presetsElement);
//   form.build(schema); form.values(); form.fill(values); form.reset();
//   form.lock(bool); form.showErrors({field: message} | null); form.showJob(key, values)
//   form.describe(values) -> nodes reading "steps 2000 · regime rising · …" (the schema's order)
import { element as html } from "./lib/dom.js";
import { finite } from "./lib/numbers.js";

export function createForm(formEl, presetsEl) {
  let fields = []; // [{spec, input, error}]
  const box = formEl.querySelector("fieldset");

  function inputFor(spec) {
    let input;
    if (spec.type === "bool") {
      input = html("input");
      input.type = "checkbox";
    } else if (spec.type === "choice") {
      input = html("select", "rv-select");
      (spec.choices || []).forEach((choice) => {
        input.appendChild(new Option(String(choice), String(choice)));
      });
    } else {
      input = html("input", "rv-select");
      if (spec.type === "int" || spec.type === "float") {
        input.type = "number";
        input.step = spec.type === "int" ? "1" : "any";
        if (finite(spec.min)) input.min = String(spec.min);
        if (finite(spec.max)) input.max = String(spec.max);
      } else {
        input.type = "text";
        input.spellcheck = false;
      }
    }
    input.name = spec.name;
    input.id = "rv-field-" + spec.name;
    input.setAttribute("data-type", spec.type);
    return input;
  }

  // The range a number takes, as the schema says it.
  function rangeText(spec) {
    if (spec.type !== "int" && spec.type !== "float") return "";
    const low = finite(spec.min);
    const high = finite(spec.max);
    if (low && high) return spec.min + " – " + spec.max;
    if (low) return "≥ " + spec.min;
    if (high) return "≤ " + spec.max;
    return "";
  }

  function fieldRow(spec) {
    const row = html("div", "rv-field");
    row.setAttribute("data-field", spec.name);
    const input = inputFor(spec);
    const label = html("label", "rv-field-label", spec.label || spec.name);
    label.htmlFor = input.id;
    row.appendChild(label);
    row.appendChild(input);
    const range = rangeText(spec);
    if (range) row.appendChild(html("span", "rv-field-range rv-meta", range));
    if (spec.help) {
      row.appendChild(html("span", "rv-field-help rv-note", spec.help));
      input.title = spec.help;
    }
    const error = row.appendChild(html("span", "rv-field-error"));
    error.hidden = true;
    error.setAttribute("role", "alert");
    fields.push({ spec: spec, input: input, error: error });
    return row;
  }

  function build(schema) {
    fields = [];
    // Groups as {name, label} (or bare names), then any group a field names that is not listed.
    const labels = {};
    const groups = (schema.groups || []).map((g) => {
      const name = typeof g === "string" ? g : g.name;
      labels[name] = (typeof g === "string" ? g : g.label) || name;
      return name;
    });
    (schema.fields || []).forEach((f) => {
      if (groups.indexOf(f.group || "") < 0) groups.push(f.group || "");
    });
    box.replaceChildren(
      ...groups
        .map((group) => {
          const set = html("fieldset", "rv-field-group");
          set.setAttribute("data-group", group);
          set.appendChild(html("legend", "", labels[group] || group || "other"));
          schema.fields
            .filter((f) => (f.group || "") === group)
            .forEach((f) => {
              set.appendChild(fieldRow(f));
            });
          return set;
        })
        .filter((set) => set.querySelector(".rv-field")),
    );
    presetsEl.replaceChildren(html("span", "rv-meta", "Presets:"));
    (schema.presets || []).forEach((preset) => {
      const button = presetsEl.appendChild(
        html("button", "rv-button rv-preset", preset.label || preset.name),
      );
      button.type = "button";
      button.setAttribute("data-preset", preset.name);
      button.addEventListener("click", () => {
        reset();
        fill(preset.values || {});
      });
    });
    reset();
  }

  function setValue(field, value) {
    if (field.spec.type === "bool") field.input.checked = !!value;
    else field.input.value = value === null || value === undefined ? "" : String(value);
  }
  function fill(values) {
    fields.forEach((f) => {
      if (Object.hasOwn(values, f.spec.name)) setValue(f, values[f.spec.name]);
    });
  }
  function reset() {
    fields.forEach((f) => {
      setValue(f, f.spec.default);
    });
    showErrors(null);
  }

  // Numbers as numbers when they read as one; anything else as typed, for the server to name.
  function values() {
    const out = {};
    fields.forEach((f) => {
      const type = f.spec.type;
      const raw = f.input.value;
      if (type === "bool") out[f.spec.name] = f.input.checked;
      else if ((type === "int" || type === "float") && raw.trim() !== "" && Number.isFinite(+raw)) {
        out[f.spec.name] = +raw;
      } else out[f.spec.name] = raw;
    });
    return out;
  }

  function lock(locked) {
    box.disabled = locked;
    const buttons = [].slice
      .call(presetsEl.querySelectorAll("button"))
      .concat([].slice.call(formEl.querySelectorAll('button[type="button"]')));
    buttons.forEach((b) => {
      b.disabled = locked;
    });
  }

  function showErrors(errors) {
    fields.forEach((f) => {
      const message = errors?.[f.spec.name];
      f.error.textContent = message || "";
      f.error.hidden = !message;
      f.input.setAttribute("aria-invalid", message ? "true" : "false");
      f.input.closest(".rv-field").classList.toggle("rv-field-bad", !!message);
    });
  }

  // Values on one line, as `name value` in the schema's order (then any it does not list):
  // a <span> each (a no-break space between name and value), " · " between.
  function describe(values) {
    if (!values) return [];
    const has = (name) => Object.hasOwn(values, name);
    const names = fields.map((f) => f.spec.name).filter(has);
    Object.keys(values).forEach((k) => {
      if (names.indexOf(k) < 0) names.push(k);
    });
    const out = [];
    names.forEach((name, i) => {
      const v = values[name];
      if (i) out.push(" · ");
      const pair = html(
        "span",
        "rv-train-value",
        name +
          "\u00a0" + // kept with its value
          (v === "" ? '""' : v === null || v === undefined ? "–" : String(v)),
      );
      pair.setAttribute("data-field", name);
      out.push(pair);
    });
    return out;
  }

  // The values a job ran with, once per process (`key`): an edit made after is kept.
  let shown = null;
  function showJob(key, values) {
    if (!fields.length || !values || key === shown) return;
    shown = key;
    fill(values);
  }

  return {
    build: build,
    values: values,
    fill: fill,
    reset: reset,
    lock: lock,
    showErrors: showErrors,
    showJob: showJob,
    describe: describe,
  };
}
