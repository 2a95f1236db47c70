// The page of a step's statistics (stats.html): what every page runs, nothing of its own.
import { startBase } from "../base.js";

startBase();
