// The page of a step against the one before it (compare.html): what every page runs, nothing of its own.
import { startBase } from "../base.js";

startBase();
