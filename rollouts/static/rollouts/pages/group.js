// The page of a group of samples (group.html): what every page runs, nothing of its own.
import { startBase } from "../base.js";

startBase();
