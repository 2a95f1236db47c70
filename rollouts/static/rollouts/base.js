// Relax Rollout Viewer: what every page runs, for the parts base.html gives every page: the
// theme selector, the header's menu on a phone, navigation (the step selector; on a sample
// page, instant moves between samples), the live poll of the bucket, where the focus goes, and
// the keys. Each page's entry
// module (pages/*.js) starts this first, then its own parts, in the order their listeners
// must be registered: a later module's keydown listener sees what an earlier one did.
import { startFocus } from "./focus.js";
import { startHeaderMenu } from "./header-menu.js";
import { startKeys } from "./keys.js";
import { startLive } from "./live.js";
import { startThemeSelect } from "./theme-select.js";
import { startViewer } from "./viewer.js";

export function startBase() {
  startThemeSelect();
  startHeaderMenu();
  startViewer();
  startLive();
  startFocus();
  startKeys();
}
