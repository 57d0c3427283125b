// The home page: "Start research" posts the question and opens the research's page.
import { busy, postJson, requestOptions } from "./api.js";
import { submitOnCtrlEnter } from "./keys.js";

const form = document.getElementById("ask");
const errors = document.getElementById("ask-error");
submitOnCtrlEnter(form);

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  const button = form.querySelector("button[type=submit]");
  const body = { question: form.elements.question.value, ...requestOptions(form) };
  await busy(button, errors, async () => {
    const created = await postJson("/api/research", body);
    window.location.assign(`/research/${encodeURIComponent(created.id)}`);
  });
});
