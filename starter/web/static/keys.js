// Ctrl+Enter (or ⌘+Enter) in the text area of a form marked data-ctrl-enter sends the form, as its
// submit button would: the question, an answer, a follow-up.
export function submitOnCtrlEnter(root = document) {
  root.addEventListener("keydown", (event) => {
    if (event.key !== "Enter" || !(event.ctrlKey || event.metaKey)) return;
    const field = event.target;
    const form = field && field.form;
    if (!(field instanceof HTMLTextAreaElement) || !form || !form.hasAttribute("data-ctrl-enter")) return;
    event.preventDefault();
    form.requestSubmit();
  });
}
