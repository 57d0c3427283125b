// A plan review: each step not yet done as textboxes "Step N title" / "Step N description" with
// "Remove step N"; "Add step"; "Feedback"; "Approve plan" (the steps as shown, when edited),
// "Revise plan" (the feedback) and "Cancel research".
import { element } from "./api.js";
import { field, heading, send } from "./forms.js";

export function planReview(section, id, status, changed) {
  const steps = status.plan ? status.plan.steps : [];
  const first = steps.filter((s) => s.status !== "pending").length + 1;
  const proposed = steps.filter((s) => s.status === "pending").map((s) => ({ title: s.title.trim(), description: (s.description || "").trim() }));
  heading(section, "Review the plan");
  const most = status.review_rounds_max;
  if (status.review_rounds) {
    section.append(element("p", { class: "round" },
      `Review round ${status.review_rounds}${most ? ` of ${most}` : ""}`));
  }
  section.append(element("p", {}, "The research waits for your word before any step runs. "
    + "Edit, remove or add steps and approve them, or say what to change and ask for a revision."));
  const form = element("form", { class: "review" });
  const list = element("ol", { class: "edit-steps", start: String(first) });
  proposed.forEach((step) => list.append(stepItem(step)));
  renumber(list, first);
  const add = element("button", { type: "button", class: "secondary" }, "Add step");
  add.addEventListener("click", () => {
    list.append(stepItem({ title: "", description: "" }));
    renumber(list, first);
    list.lastElementChild.querySelector("input").focus();
  });
  const [wrap, feedback] = field("plan-feedback", "Feedback");
  form.append(list, add, wrap, actions(form, list, feedback, { id, proposed, changed, first }));
  section.append(form);
}

function actions(form, list, feedback, context) {
  const { id, proposed, changed } = context;
  const approve = element("button", { type: "submit" }, "Approve plan");
  const revise = element("button", { type: "button" }, "Revise plan");
  const cancel = element("button", { type: "button", class: "danger" }, "Cancel research");
  const errors = element("p", { class: "error", role: "alert", hidden: "" });
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const shown = stepsShown(list);
    const body = { decision: "approve", feedback: feedback.value };
    if (JSON.stringify(shown) !== JSON.stringify(proposed)) body.steps = shown;
    send(id, approve, errors, body, changed);
  });
  revise.addEventListener("click", () =>
    send(id, revise, errors, { decision: "revise", feedback: feedback.value }, changed));
  cancel.addEventListener("click", () => send(id, cancel, errors, { decision: "cancel" }, changed));
  const row = element("div", { class: "actions" });
  row.append(approve, revise, cancel);
  const wrap = element("div");
  wrap.append(row, errors);
  return wrap;
}

function stepItem(step) {
  const item = element("li", { class: "edit-step" });
  const title = element("input", { type: "text", class: "step-title-input", maxlength: "200" });
  title.value = step.title;
  const description = element("textarea", { class: "step-description-input", rows: "2", maxlength: "1000" });
  description.value = step.description;
  const remove = element("button", { type: "button", class: "secondary remove-step" });
  remove.addEventListener("click", () => {
    const list = item.parentElement;
    const next = item.nextElementSibling || item.previousElementSibling;
    item.remove();
    renumber(list, Number(list.getAttribute("start")));
    (next ? next.querySelector("input") : list.parentElement.querySelector("button")).focus();
  });
  item.append(element("label", { class: "title-label" }), title,
    element("label", { class: "description-label" }), description, remove);
  return item;
}

// Labels and ids follow the steps' places in the plan, after any removal or addition.
function renumber(list, first) {
  [...list.children].forEach((item, index) => {
    const n = first + index;
    const [titleLabel, title, descriptionLabel, description, remove] = item.children;
    title.id = `step-${n}-title`;
    description.id = `step-${n}-description`;
    titleLabel.htmlFor = title.id;
    titleLabel.textContent = `Step ${n} title`;
    descriptionLabel.htmlFor = description.id;
    descriptionLabel.textContent = `Step ${n} description`;
    remove.textContent = `Remove step ${n}`;
  });
}

function stepsShown(list) {
  return [...list.children].map((item) => ({
    title: item.querySelector("input").value.trim(),
    description: item.querySelector("textarea").value.trim(),
  }));
}
