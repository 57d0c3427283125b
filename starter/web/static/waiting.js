// What the research waits for, in place: a clarification, a plan review or a report review.
// A panel is built when what is awaited changes, never while a person is typing in it.
import { element, getFragment } from "./api.js";
import { field, heading, send } from "./forms.js";
import { planReview } from "./planreview.js";

export function waitingKey(status) {
  if (status.pending_question) return `question:${status.clarification_count}:${status.pending_question}`;
  if (status.pending_review === "plan") return `plan:${status.plan_iterations}:${status.review_rounds}`;
  if (status.pending_review === "report") return `report:${status.review_rounds}`;
  return "";
}

export function renderWaiting(section, id, status, changed) {
  const key = waitingKey(status);
  if (key === (section.dataset.key || "")) return;
  // Focus nowhere in particular (the page just opened) or in the panel that goes: it moves to
  // the new panel's first field, or, when nothing waits any more, to the progress log.
  const active = document.activeElement;
  const log = document.getElementById("log");
  const move = !active || active === document.body || section.contains(active)
    || (active === log && section.dataset.moved === "yes");
  delete section.dataset.moved;
  section.dataset.key = key;
  section.replaceChildren();
  section.hidden = !key;
  if (!key) {
    if (move) {
      log.focus();
      section.dataset.moved = "yes";  // the next question or review takes it back
    }
    return;
  }
  if (status.pending_question) {
    clarification(section, id, status, changed);
  } else if (status.pending_review === "plan") {
    planReview(section, id, status, changed);
  } else {
    reportReview(section, id, status, changed);
  }
  const first = section.querySelector("input, textarea");
  if (move && first) first.focus();
}

function clarification(section, id, status, changed) {
  heading(section, "The research asks you");
  section.append(element("p", { class: "asked" }, status.pending_question));
  const form = element("form", { class: "answer", "data-ctrl-enter": "" });
  const [wrap, input] = field("clarification-answer", "Your answer");
  input.required = true;
  const button = element("button", { type: "submit" }, "Send answer");
  const errors = element("p", { class: "error", role: "alert", hidden: "" });
  form.append(wrap, button, errors);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    send(id, button, errors, { answer: input.value }, changed, "answer");
  });
  section.append(form);
}

function reportReview(section, id, status, changed) {
  heading(section, "Review the report");
  const most = status.review_rounds_max;
  section.append(element("p", { class: "round" },
    `Review round ${status.review_rounds}${most ? ` of ${most}` : ""}`));
  if (status.review_rounds > 1) {
    // The words come from the page (starter/web/review_texts.py): a rewrite that came out as the
    // draft was is not called "rewritten with your feedback".
    const words = JSON.parse(section.dataset.words || "{}");
    const same = words.unchanged && (status.draft_report_markdown || "").includes(words.unchanged);
    section.append(element("p", {}, (same ? words.same : words.revised) || ""));
  }
  const critique = status.critique;
  if (critique) {
    section.append(element("p", {}, `The critic scores it ${critique.quality.toFixed(2)} for quality and `
      + `${critique.hallucination_risk.toFixed(2)} for the risk of unsupported statements.`));
    section.append(element("h3", {}, "The critic's issues"));
    const issues = element("ul", { class: "issues" });
    (critique.issues || []).forEach((issue) => issues.append(
      element("li", { class: `severity-${issue.severity}` }, `${issue.severity}: ${issue.text}`)));
    if (!issues.children.length) issues.append(element("li", {}, "None listed."));
    section.append(issues);
    if (critique.rewrite_suggestion) section.append(element("p", {}, `Suggestion: ${critique.rewrite_suggestion}`));
  }
  section.append(element("h3", {}, "The draft"));
  const draft = element("div", { class: "draft" }, "Loading the draft…");
  section.append(draft);
  getFragment(`/research/${encodeURIComponent(id)}/draft-fragment`)
    .then((html) => { draft.innerHTML = html; })  // rendered and sanitised on the server
    .catch((error) => { draft.textContent = `The draft could not be loaded: ${error.message}`; });
  reportReviewForm(section, id, status, changed);
}

// What Revise report does in this round (starter/web/review_texts.py says the same without JS).
function reviseHelp(round, most) {
  if (most > 1 && round < most) {
    return "Revise report rewrites it with your feedback, checks it again and shows you the "
      + "revision for another review round.";
  }
  if (most > 1) {
    return "This is the last round: Revise report rewrites it once more with your feedback, and "
      + `that revision is final: ${most} review rounds were used, you are not asked again.`;
  }
  return "Revise report rewrites it once with your feedback; that revision is final: "
    + "you are not asked again.";
}

function reportReviewForm(section, id, status, changed) {
  const round = status.review_rounds;
  const form = element("form", { class: "review" });
  const [wrap, feedback] = field("report-feedback", "Feedback");
  const approve = element("button", { type: "submit" }, "Approve report");
  const revise = element("button", { type: "button" }, "Revise report");
  const errors = element("p", { class: "error", role: "alert", hidden: "" });
  const actions = element("div", { class: "actions" });
  actions.append(approve, revise);
  const final = element("p", { class: "help", id: "revise-help" },
    reviseHelp(round, status.review_rounds_max));
  revise.setAttribute("aria-describedby", "revise-help");
  form.append(wrap, actions, final, errors);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    send(id, approve, errors, { decision: "approve", feedback: feedback.value, round }, changed);
  });
  revise.addEventListener("click", () =>
    send(id, revise, errors, { decision: "revise", feedback: feedback.value, round }, changed));
  section.append(form);
}
