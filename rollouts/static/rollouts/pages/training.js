// The Training page (training.html): the job's snapshot polled and drawn, and its buttons.
import { startBase } from "../base.js";
import { startTraining } from "../training.js";

startBase();
startTraining();
