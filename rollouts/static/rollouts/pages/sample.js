// The sample page (sample.html; error pages of a step too): navigation between samples, reading
// mode, and, when it was opened from a search, the matches marked.
import { startBase } from "../base.js";
import { byId } from "../lib/dom.js";
import { startReadable } from "../readable.js";
import { startSearchMarks } from "../search-sample.js";

startBase();
startReadable();
if (byId("rv-search-nav")) startSearchMarks();
