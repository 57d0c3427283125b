// The finished research: the report (rendered and sanitised on the server), its citations'
// popovers, and "Ask a follow-up".
import { busy, getFragment, postJson, say } from "./api.js";
import { citationPopovers } from "./popover.js";

const RETRY_MS = [500, 1000, 2000, 4000];

let shown = null;

// The report in place, once: every caller waits for the same load (a failed one may be retried).
export function showReport(area, id) {
  if (!shown) {
    shown = place(area, id).then((ok) => { if (!ok) shown = null; });
  }
  return shown;
}

async function place(area, id) {
  if (!area.querySelector("[data-report]") && !(await load(area, id))) return false;
  citationPopovers(area);
  followUp(area, id);
  return true;
}

// The report is stored as the research closes: a moment after its last event, it may not be there yet.
async function load(area, id) {
  for (let attempt = 0; ; attempt += 1) {
    try {
      area.innerHTML = await getFragment(`/research/${encodeURIComponent(id)}/report-fragment`);
      return true;
    } catch (error) {
      if (attempt >= RETRY_MS.length) {
        say(area, new Error(`The report could not be loaded: ${error.message}`));
        return false;
      }
      await new Promise((resolve) => setTimeout(resolve, RETRY_MS[attempt]));
    }
  }
}

function followUp(area, id) {
  const form = area.querySelector("#follow-up");
  if (!form) return;
  // A suggested next question fills the box, to edit and ask (without JavaScript: a reload does).
  area.querySelectorAll("a.suggestion").forEach((link) => link.addEventListener("click", (event) => {
    event.preventDefault();
    form.elements.question.value = link.textContent;
    form.elements.question.focus();
  }));
  const errors = form.querySelector(".error");
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const button = form.querySelector("button[type=submit]");
    await busy(button, errors, async () => {
      const created = await postJson("/api/research", { question: form.elements.question.value, follow_up_of: id });
      window.location.assign(`/research/${encodeURIComponent(created.id)}`);
    });
  });
}
