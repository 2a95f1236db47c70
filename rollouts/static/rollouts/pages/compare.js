// The compare page (compare.html): what every page runs, and its step picker, which compares as
// soon as a step is picked with the mouse or touch, or on Enter (without this script the form's
// button does it). Arrow keys only move the choice: a keyboard user is not sent away mid-way.
import { startBase } from "../base.js";

startBase();

const form = document.getElementById("rv-compare-pick");
if (form) {
  for (const select of form.querySelectorAll("select")) {
    let keyed = false; // the last change came from the arrow keys
    select.addEventListener("pointerdown", () => {
      keyed = false;
    });
    select.addEventListener("keydown", (event) => {
      keyed = true;
      if (event.key === "Enter") {
        event.preventDefault();
        form.requestSubmit();
      }
    });
    select.addEventListener("change", () => {
      if (!keyed) form.requestSubmit();
    });
  }
}
