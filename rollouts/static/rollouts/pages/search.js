// A bucket's search (search.html): the next slices of the search, the hits and their curve.
import { startBase } from "../base.js";
import { startSearch } from "../search.js";

startBase();
startSearch();
