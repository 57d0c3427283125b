// Small pieces the waiting panels share: a heading, a labelled field, sending a decision.
import { busy, element, postJson } from "./api.js";

export function heading(section, text) {
  section.append(element("h2", { id: "waiting-heading" }, text));
  section.setAttribute("aria-labelledby", "waiting-heading");
}

export function field(id, label, multiline = true) {
  const wrap = element("div", { class: "field" });
  const input = element(multiline ? "textarea" : "input", { id, name: id, rows: "3" });
  if (!multiline) input.setAttribute("type", "text");
  wrap.append(element("label", { for: id }, label), input);
  return [wrap, input];
}

export function send(id, button, errors, body, changed, path = "review") {
  return busy(button, errors, async () => {
    await postJson(`/api/research/${encodeURIComponent(id)}/${path}`, body);
    changed();
  });
}
