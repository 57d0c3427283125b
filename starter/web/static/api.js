// The app's own JSON API, from the pages: every POST carries the session's CSRF token.

export function csrfToken() {
  const meta = document.querySelector('meta[name="csrf-token"]');
  return meta ? meta.content : "";
}

async function answer(response) {
  const data = await response.json().catch(() => ({}));
  if (!response.ok) {
    const error = new Error(data.error || `${response.status} ${response.statusText}`);
    // Retry-After on a 503: busy, not broken (a research whose worker is still working).
    error.retryAfter = Number(response.headers.get("retry-after")) || 0;
    throw error;
  }
  return data;
}

export async function postJson(url, body) {
  const response = await fetch(url, {
    method: "POST",
    credentials: "same-origin",
    headers: { "Content-Type": "application/json", "X-CSRF-Token": csrfToken() },
    body: JSON.stringify(body),
  });
  return answer(response);
}

export async function getJson(url) {
  return answer(await fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } }));
}

// A server-rendered (and server-sanitised) fragment of one of our pages.
export async function getFragment(url) {
  const response = await fetch(url, { credentials: "same-origin" });
  if (!response.ok) {
    throw new Error(`${response.status} ${response.statusText}`);
  }
  return response.text();
}

// Show an error in the element meant for it (a role="alert" paragraph), or clear it.
export function say(element, error) {
  if (!element) return;
  element.textContent = error ? error.message || String(error) : "";
  element.hidden = !error;
}

// A button that sends something: disabled while it runs, its errors said in `errors`.
export async function busy(button, errors, work) {
  button.disabled = true;
  say(errors, null);
  try {
    return await work();
  } catch (error) {
    say(errors, error);
    return undefined;
  } finally {
    button.disabled = false;
  }
}

export function element(tag, attributes = {}, text = "") {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    node.setAttribute(name, value);
  }
  if (text) node.textContent = text;
  return node;
}

// The request's options a form offers (its `data-option` controls, rendered from the server's
// table of options): what POST /api/research and /api/standing take. An empty field is left out
// (the server's default).
export function requestOptions(form) {
  const body = {};
  for (const control of form.querySelectorAll("[data-option]")) {
    const kind = control.dataset.option;
    if (kind === "checkbox") body[control.name] = control.checked;
    else if (control.value.trim() === "") continue;
    else body[control.name] = kind === "number" ? Number(control.value) : control.value;
  }
  return body;
}
