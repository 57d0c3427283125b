// The plan as a list of steps with their status, and the progress bar (steps done of planned).
import { element } from "./api.js";

// The words for each step status, and which statuses count as done, come from the page (rendered
// from starter/web/pages/research.py's STEP_WORDS and DONE, their one source).
const PLAN = document.getElementById("plan-steps");
const SAY = PLAN ? JSON.parse(PLAN.dataset.words || "{}") : {};
const DONE = PLAN ? JSON.parse(PLAN.dataset.done || "[]") : ["completed", "skipped"];

export function renderPlan(list, plan) {
  list.replaceChildren();
  const steps = plan ? plan.steps : [];
  steps.forEach((step) => {
    const item = element("li", { class: `step step-${step.status}` });
    item.append(element("span", { class: "step-status" }, SAY[step.status] || step.status), " ",
      element("span", { class: "step-title" }, step.title));
    if (step.description) item.append(element("p", { class: "step-description" }, step.description));
    list.append(item);
  });
  if (!steps.length) list.append(element("li", { class: "step-none" }, "No plan yet."));
}

export function renderProgress(bar, plan) {
  const steps = plan ? plan.steps : [];
  const done = steps.filter((s) => DONE.includes(s.status)).length;
  const skipped = steps.filter((s) => s.status === "skipped").length;
  const planned = steps.length;
  // A skipped step (cancelled, out of budget) is not done: a cancelled plan is not a full bar.
  const text = planned ? `${done} of ${planned} steps done${skipped ? `, ${skipped} skipped` : ""}` : "no plan yet";
  bar.setAttribute("aria-valuemax", String(Math.max(planned, 1)));
  bar.setAttribute("aria-valuenow", String(done));
  bar.setAttribute("aria-valuetext", text);
  const share = planned ? done / planned : 0;
  bar.querySelector(".bar").style.width = `${Math.round(share * 100)}%`;
  const label = document.getElementById("progress-text");
  if (label) label.textContent = text;
}
