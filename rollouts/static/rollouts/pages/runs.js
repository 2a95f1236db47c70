// The run picker (runs.html): the table's rows filled in while runs are still being indexed.
import { startBase } from "../base.js";
import { startRuns } from "../runs.js";

startBase();
startRuns();
