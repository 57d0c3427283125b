// The research page: the stage, the progress bar, the plan, the live log, what the research
// waits for, and at the end the report. The log is the stream of events; each event that changes
// the picture asks for the research's status once (several close together: once).
import { busy, getJson, postJson, say } from "./api.js";
import { openLog } from "./log.js";
import { renderPlan, renderProgress } from "./plan.js";
import { showReport } from "./report.js";
import { renderWaiting } from "./waiting.js";
import { submitOnCtrlEnter } from "./keys.js";

const REFRESH_ON = new Set(["stage", "plan", "step_started", "step_done", "question", "answer",
  "review_requested", "review", "refinement", "verification", "done"]);
const main = document.querySelector("[data-research]");
const id = main.dataset.research;
const part = (name) => document.getElementById(name);
let timer = null;
// Answers can arrive out of order (a slow one asked before the research ended, after the one that
// says it ended): only the newest asked is shown, and nothing after the end undoes it.
let asked = 0;
let shown = 0;
let ended = false;

async function refresh() {
  const mine = ++asked;
  try {
    const status = await getJson(`/api/research/${encodeURIComponent(id)}`);
    if (mine < shown || ended) return;
    shown = mine;
    await update(status);
    say(part("status-error"), null);
    note(null);
  } catch (error) {
    if (error.retryAfter) {
      // Its worker polls but is busy: still working, not an error; ask again when it says.
      say(part("status-error"), null);
      note(error.message);
      refreshSoon(error.retryAfter * 1000);
      return;
    }
    note(null);
    say(part("status-error"), new Error(`The research's status could not be read: ${error.message}`));
  }
}

function note(text) {
  const line = part("status-note");
  if (!line) return;
  line.textContent = text || "";
  line.hidden = !text;
}

// The plan as the events tell it (a `plan` event carries its steps, `step_started` and
// `step_done` their status), shown at once: a busy worker's slow status never leaves
// "No plan yet" beside steps done. The status, when it answers, shows the plan as it is.
// Seeded with the plan the page came with: the events it was rendered with are not replayed.
const rendered = JSON.parse(part("plan-steps").dataset.steps || "[]");
let planSoFar = rendered.length ? { steps: rendered } : null;
function followPlan(event) {
  const data = event.data || {};
  if (event.kind === "plan" && Array.isArray(data.steps)) {
    planSoFar = { steps: data.steps.map((step) => ({ ...step })) };
  } else if (planSoFar && (event.kind === "step_started" || event.kind === "step_done")) {
    const step = planSoFar.steps[data.index - 1];
    if (!step) return;
    step.status = event.kind === "step_done" ? "completed" : "in_progress";
  } else {
    return;
  }
  if (ended) return;
  renderPlan(part("plan-steps"), planSoFar);
  renderProgress(part("progress"), planSoFar);
}

function refreshSoon(delay = 150) {
  clearTimeout(timer);
  timer = setTimeout(refresh, delay);
}

// The stages a research ends in: while its result is being stored, the status still says it runs.
const ENDED = new Set(["completed", "cancelled", "failed"]);

async function update(status) {
  const stage = status.outcome || status.stage || "";
  // Closed: the API shows its result (with `outcome`), or says it is no longer running. A stage
  // of "completed" alone is the last moment of a running research, before its result is stored.
  const done = Boolean(status.outcome) || Boolean(status.status && status.status !== "running");
  stopControl(status, done);
  renderWaiting(part("waiting"), id, done ? {} : status, refresh);
  if (!done && ENDED.has(stage)) {
    // Its last moment: the plan and the stage change together with the report, never before it.
    showStage("finishing");
    refreshSoon(300);
    return;
  }
  if (done) {
    ended = true;
    await showReport(part("report-area"), id);
    main.classList.add("research-done");
  }
  showStage(stage);
  renderPlan(part("plan-steps"), status.plan);
  renderProgress(part("progress"), status.plan);
}

function showStage(stage) {
  if (stage) part("stage").textContent = stage.replace(/_/g, " ");
}

// "Cancel research" on any running research; the plan review has its own.
function stopControl(status, done) {
  const form = part("stop");
  if (!form) return;
  form.hidden = done || status.pending_review === "plan";
  if (form.dataset.wired) return;
  form.dataset.wired = "yes";
  const button = form.querySelector("button");
  const errors = part("status-error");
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    busy(button, errors, async () => {
      await postJson(`/api/research/${encodeURIComponent(id)}/cancel`, {});
      refresh();
    });
  });
}

// A finished research's page comes with its report: its popovers work before anything is fetched.
if (part("report-area").querySelector("[data-report]")) showReport(part("report-area"), id);
submitOnCtrlEnter(main);
openLog(id, part("log"), part("log-state"), {
  onEvent(event) {
    const stage = event.kind === "stage" && event.data && event.data.stage;
    if (stage && !ended) showStage(ENDED.has(stage) ? "finishing" : stage);
    followPlan(event);
    if (REFRESH_ON.has(event.kind)) refreshSoon();
  },
  onEnd() {
    refresh();
  },
});
refresh();
