// Citation popovers: on hover or keyboard focus, a citation [n] shows its source's card (title,
// URL, local or web, the evidence the verifier matched and the claims citing it). The card is the
// element the link's aria-describedby names, so a screen reader reads it as the description;
// it is shown with the native popover API, in the top layer, beside the link.

const HIDE_DELAY_MS = 200;
const TOUCH = window.matchMedia("(hover: none)");

export function citationPopovers(root) {
  const state = { open: null, timer: null };
  const cite = (event) => event.target.closest && event.target.closest("a.cite");
  const card = (event) => event.target.closest && event.target.closest(".source-card");
  root.addEventListener("mouseover", (event) => {
    if (cite(event)) show(state, cite(event));
    else if (card(event)) clearTimeout(state.timer);
  });
  root.addEventListener("mouseout", (event) => { if (cite(event) || card(event)) hideSoon(state); });
  root.addEventListener("focusin", (event) => { if (cite(event)) show(state, cite(event)); });
  root.addEventListener("focusout", (event) => { if (cite(event)) hideSoon(state); });
  document.addEventListener("keydown", (event) => { if (event.key === "Escape") hide(state); });
  // A touch screen has no hover: a tap on a citation shows its card (a second tap on the same
  // citation goes to the source in the list); a tap anywhere else closes it.
  root.addEventListener("click", (event) => {
    const link = cite(event);
    if (!link || !TOUCH.matches) return;
    const target = document.getElementById(link.getAttribute("aria-describedby") || "");
    if (state.open && state.open === target && state.tapped === link) return;
    event.preventDefault();
    show(state, link);
    state.tapped = link;
  });
  document.addEventListener("click", (event) => {
    if (TOUCH.matches && state.open && !cite(event) && !card(event)) hide(state);
  });
  window.addEventListener("scroll", () => hide(state), { passive: true });
}

function show(state, link) {
  const target = document.getElementById(link.getAttribute("aria-describedby") || "");
  if (!target) return;
  clearTimeout(state.timer);
  if (state.open && state.open !== target) hide(state);
  if (target.showPopover) {
    if (!target.matches(":popover-open")) target.showPopover();
  } else {
    target.classList.add("open");
  }
  place(target, link);
  state.open = target;
}

function hideSoon(state) {
  clearTimeout(state.timer);
  state.timer = setTimeout(() => hide(state), HIDE_DELAY_MS);
}

function hide(state) {
  clearTimeout(state.timer);
  const target = state.open;
  state.open = null;
  if (!target) return;
  if (target.hidePopover && target.matches(":popover-open")) target.hidePopover();
  target.classList.remove("open");
}

// Below the link, or above it when there is no room; never off the side of the window.
function place(target, link) {
  const at = link.getBoundingClientRect();
  const width = Math.min(target.offsetWidth || 360, window.innerWidth - 16);
  const left = Math.max(8, Math.min(at.left, window.innerWidth - width - 8));
  const below = at.bottom + 6;
  const height = target.offsetHeight;
  const top = below + height > window.innerHeight && at.top - height - 6 > 0 ? at.top - height - 6 : below;
  target.style.left = `${left}px`;
  target.style.top = `${top}px`;
}
