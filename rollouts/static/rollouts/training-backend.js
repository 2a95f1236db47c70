// Relax Rollout Viewer: the Training page's word on where the job runs. For a Ray job, a
// "cluster" chip (the address, Ray's own status, "cluster unreachable" when its dashboard does
// not answer: the rest of the page then shows the last known state); and the job's own message
// (rejected by the cluster, stopped from Ray's side, Ray's reason for a failure).
export function renderBackend(job) {
  const part = job.backend || {};
  const chip = document.getElementById("rv-chip-cluster");
  const note = document.getElementById("rv-train-job-message");
  chip.hidden = part.kind !== "ray";
  let value = "–";
  if (part.reachable === false) value = "cluster unreachable";
  else if (part.kind === "ray") value = "ray" + (part.ray_status ? " · " + part.ray_status : "");
  chip.querySelector(".rv-chip-value").textContent = value;
  chip.setAttribute("data-reachable", part.reachable === false ? "no" : "yes");
  chip.title = [
    part.address,
    part.submission_id && "submission " + part.submission_id,
    part.message,
  ]
    .filter(Boolean)
    .join("\n");
  const said = part.reachable === false ? part.message : job.message;
  note.textContent = said || "";
  note.hidden = !said;
}
