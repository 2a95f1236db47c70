// Relax Rollout Viewer: the header on a phone. Below 720 px the stylesheet shows one row (the
// brand, this menu button and the step) and hides the rest (.rv-more) until the button opens
// it; wider, the button is not shown and nothing changes. Without this module the header
// simply wraps.
import { byId } from "./lib/dom.js";

export function setMenuOpen(header, button, open) {
  header.dataset.menu = open ? "open" : "closed";
  button.setAttribute("aria-expanded", String(open));
}

export function startHeaderMenu() {
  const header = byId("rv-header");
  const button = byId("rv-menu-button");
  if (!header || !button) return;
  setMenuOpen(header, button, false);
  button.addEventListener("click", () =>
    setMenuOpen(header, button, header.dataset.menu !== "open"),
  );
  header.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && header.dataset.menu === "open") {
      setMenuOpen(header, button, false);
      button.focus();
    }
  });
}
