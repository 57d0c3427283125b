// Every form marked `data-confirm` (a Delete) asks first; confirmed, it tells the server so
// (`confirmed=yes`), which otherwise asks on a page of its own (the same question without
// JavaScript). Loaded by every page (base.html).
document.addEventListener(
  "submit",
  (event) => {
    const form = event.target;
    if (!(form instanceof HTMLFormElement) || !form.dataset.confirm) return;
    if (!window.confirm(form.dataset.confirm)) {
      event.preventDefault();
      event.stopImmediatePropagation();
      return;
    }
    if (!form.querySelector("input[name=confirmed]")) {
      const yes = document.createElement("input");
      Object.assign(yes, { type: "hidden", name: "confirmed", value: "yes" });
      form.append(yes);
    }
  },
  true,
);
