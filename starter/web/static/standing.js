// /standing: create a standing research, and run now, pause, resume or delete one (the JSON API).
import { busy, csrfToken, postJson, requestOptions, say } from "./api.js";

const form = document.getElementById("standing-create");
const errors = document.getElementById("standing-error");
const actionErrors = document.getElementById("standing-action-error");

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  const button = form.querySelector("button[type=submit]");
  const every = form.elements.every.value.trim();
  const cron = form.elements.cron.value.trim();
  const notify = form.elements.notify.value.split("\n").map((line) => line.trim()).filter(Boolean);
  const body = { question: form.elements.question.value, ...requestOptions(form), notify };
  // as typed: both is refused with its reason; neither is the form's default
  if (every) body.every = every;
  if (cron) body.cron = cron;
  if (!every && !cron) body.every = form.elements.every.placeholder;
  const created = await busy(button, errors, () => postJson("/api/standing", body));
  if (created) window.location.assign("/standing?created=1");
});

async function remove(id) {
  const response = await fetch(`/api/standing/${encodeURIComponent(id)}`, {
    method: "DELETE",
    credentials: "same-origin",
    headers: { "X-CSRF-Token": csrfToken() },
  });
  if (!response.ok) {
    const data = await response.json().catch(() => ({}));
    throw new Error(data.error || `${response.status} ${response.statusText}`);
  }
}

// Each action is a form that works without JavaScript; with it, the JSON API, in place. A Delete
// was confirmed already (confirm.js runs first and stops the submit if the person says no).
for (const actionForm of document.querySelectorAll("[data-standing] form[data-action]")) {
  actionForm.addEventListener("submit", async (event) => {
    event.preventDefault();
    const button = actionForm.querySelector("button");
    const id = actionForm.closest("[data-standing]").dataset.standing;
    const action = actionForm.dataset.action;
    say(actionErrors, null);
    const done = await busy(button, actionErrors, async () => {
      if (action === "delete") return remove(id).then(() => true);
      const answer = await postJson(`/api/standing/${encodeURIComponent(id)}/${action}`, {});
      if (action === "run" && answer.research_id) {
        window.location.assign(`/research/${encodeURIComponent(answer.research_id)}`);
        return false;
      }
      return true;
    });
    if (done) window.location.reload();
  });
}
