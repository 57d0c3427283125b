// /standing: create a standing research, and run now, pause, resume or delete one (the JSON API).
import { busy, csrfToken, postJson, say } from "./api.js";

const form = document.getElementById("standing-create");
const errors = document.getElementById("standing-error");
const actionErrors = document.getElementById("standing-action-error");

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  const button = form.querySelector("button[type=submit]");
  const every = form.elements.every.value.trim();
  const cron = form.elements.cron.value.trim();
  const body = { question: form.elements.question.value, depth: form.elements.depth.value };
  if (cron && !every) body.cron = cron;
  else body.every = every;
  const created = await busy(button, errors, () => postJson("/api/standing", body));
  if (created) window.location.reload();
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

for (const button of document.querySelectorAll("[data-standing] button[data-action]")) {
  button.addEventListener("click", async () => {
    const id = button.closest("[data-standing]").dataset.standing;
    const action = button.dataset.action;
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
