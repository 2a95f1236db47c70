// A bucket's trends (trends.html): the curves, the grid, other runs, the cards and the reading.
import { startBase } from "../base.js";
import { startTrends } from "../trends.js";

startBase();
startTrends();
