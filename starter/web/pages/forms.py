"""The pages' forms without JavaScript: each is a plain HTML form post that does
what the page's script does through the JSON API (the same `service` calls, the same owner check
and one-line refusals) and then sends the browser on (303): to the research's page, the library,
the home page. The forms themselves live with their pages (research.py, library.py,
documents.py, standing.py); this is how every one of them is read and answered.

A form carries the page's CSRF token in a hidden `csrf` field, and a post another site's page
sends (Sec-Fetch-Site or Origin says so) is refused.
"""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable
from urllib.parse import parse_qs, quote

from fastapi import Request
from fastapi.responses import RedirectResponse, Response

from starter.client.errors import ClientError
from starter.web.deps import ApiError, Backend
from starter.web.identity import auth
from starter.web.pages.frame import backend, error_page, page, to_signin

#: A form is a question, an answer or feedback: 5,000 characters each at most, and a few fields.
FORM_LIMIT = 64 * 1024

#: A form's work for the signed-in user: the research id whose page comes next, or a path.
Work = Callable[[str, Backend], Awaitable[str]]


async def act(
    request: Request,
    form: dict[str, str],
    back: str | None,
    work: Work,
    confirm: str | None = None,
) -> Response:
    """WORK(user, app) for the signed-in user, then the research's page (or the path WORK
    answers); or the error page, with a way back to BACK's page (a research id, a path, or home).
    With CONFIRM (a Delete), WORK waits for the person's yes: the page's script asks and sends
    `confirmed=yes`; without JavaScript this asks CONFIRM on a page of its own first."""
    user = auth.user_from_request(request)
    here = (
        back
        if back and back.startswith("/")
        else f"/research/{quote(back, safe='')}"
        if back
        else "/"
    )
    if user is None:
        return to_signin(request, here)
    refused = cross_site(request, form)
    if refused:
        return error_page(request, user, 403, refused, here)
    if confirm and form.get("confirmed") != "yes":
        fields = {k: v for k, v in form.items() if k != "confirmed"}
        return page(
            request,
            "confirm.html",
            user,
            question=confirm,
            fields=fields,
            action=request.url.path,
            back=here,
        )
    try:
        target = await work(user, backend(request))
    except ApiError as err:
        return error_page(request, user, err.status, err.message, here)
    except ClientError as err:
        failure = ApiError.of(err)
        return error_page(request, user, failure.status, failure.message, here)
    return RedirectResponse(
        target if target.startswith("/") else f"/research/{quote(target, safe='')}", status_code=303
    )


def cross_site(request: Request, form: dict[str, str]) -> str | None:
    site = request.headers.get("sec-fetch-site")
    if site is not None and site not in ("same-origin", "none"):
        return "Refused: the form did not come from this site's page."
    if not hmac.compare_digest(form.get("csrf", "").encode(), auth.csrf_token(request).encode()):
        return "Refused: the form is out of date or did not come from this site's page. Reload the page and try again."
    return None


async def read_form(request: Request, limit: int = FORM_LIMIT, fields: int = 20) -> dict[str, str]:
    """The posted form's fields (the first value of each); nothing if it is longer than LIMIT."""
    body = await request.body()
    if len(body) > limit:
        return {}
    found = parse_qs(body.decode("utf-8", "replace"), max_num_fields=fields, keep_blank_values=True)
    return {k: v[0] for k, v in found.items()}
