// A step as a table (table.html): keyboard rows and filters that apply when chosen.
import { startBase } from "../base.js";
import { startTable } from "../table.js";

startBase();
startTable();
