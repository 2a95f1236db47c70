// A prompt across steps (prompt.html): the chart of its mean reward per step.
import { startBase } from "../base.js";
import { startPromptChart } from "../prompt.js";

startBase();
startPromptChart();
