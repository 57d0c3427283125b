// /library: rename a research in place through the JSON API (PATCH /api/library/{id}); without
// JavaScript the same form posts to /library/{id}/rename and the page comes back renamed.
import { busy, csrfToken, say } from "./api.js";

const status = document.getElementById("library-status");
const errors = document.getElementById("library-error");

async function rename(id, title) {
  const response = await fetch(`/api/library/${encodeURIComponent(id)}`, {
    method: "PATCH",
    credentials: "same-origin",
    headers: { "Content-Type": "application/json", "X-CSRF-Token": csrfToken() },
    body: JSON.stringify({ title }),
  });
  const data = await response.json().catch(() => ({}));
  if (!response.ok) {
    throw new Error(data.error || `${response.status} ${response.statusText}`);
  }
  return data;
}

for (const form of document.querySelectorAll("form.rename")) {
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const entry = form.closest("[data-research]");
    const button = form.querySelector("button[type=submit]");
    status.hidden = true;
    const renamed = await busy(button, errors, () => rename(entry.dataset.research, form.elements.title.value));
    if (!renamed) return;
    entry.querySelector("a").textContent = renamed.title;
    form.elements.title.value = renamed.title;
    const remove = entry.querySelector("form.delete button");
    if (remove) remove.setAttribute("aria-label", `Delete “${renamed.title}” from the library`);
    status.textContent = `Renamed to “${renamed.title}”.`;
    status.hidden = false;
  });
}
