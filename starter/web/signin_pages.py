"""Signing in and out (`/signin`, `/signout`), beside the pages of pages.py.

A sign-in post another site made is refused (login CSRF: `auth.cross_site_signin`); wrong tokens
are rate-limited per client and sign-ins per user (429 with Retry-After, on the form); signing
out ends the session at once, on every replica (starter/web/sessions.py).
"""

from __future__ import annotations

from urllib.parse import parse_qs

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from starlette.exceptions import HTTPException

from starter.web import auth, pages

router = APIRouter(include_in_schema=False)
#: A sign-in form is a token and a path: anything longer is not one.
FORM_LIMIT = 8192


@router.get("/signin", response_class=HTMLResponse)
async def signin_form(request: Request, next: str = "/") -> Response:  # noqa: A002 - the query's name
    return pages._page(request, "signin.html", None, next=_local(next), error=None)


@router.post("/signin", response_class=HTMLResponse)
async def signin(request: Request) -> Response:
    form = await _form(request)
    target = _local(form.get("next", "/"))
    refused = auth.cross_site_signin(request)  # login CSRF
    if refused:
        return HTMLResponse(refused, status_code=403)
    try:
        user = auth.check_token(form.get("token", "").strip())
        if user is not None:
            auth.signed_in(user)
    except HTTPException as err:  # too many attempts
        return _limited(request, target, err)
    if user is None:
        return pages._page(
            request,
            "signin.html",
            None,
            status=401,
            next=target,
            error="That access token is not valid. Check it and try again.",
        )
    response = RedirectResponse(target, status_code=303)
    auth.start_session(response, user)
    return response


@router.post("/signout")
async def signout(request: Request) -> Response:
    form = await _form(request)
    if auth.user_from_request(request) is not None and form.get("csrf") != auth.csrf_token(request):
        return HTMLResponse(
            "Refused: the form did not come from this site's page.", status_code=403
        )
    from starter.web.oidc_pages import signed_out_there  # it builds on this module

    response = await signed_out_there(request) or RedirectResponse("/signin", status_code=303)
    auth.end_session(response)
    return response


def _limited(request: Request, target: str, err: HTTPException) -> Response:
    page = pages._page(request, "signin.html", None, status=429, next=target, error=str(err.detail))
    page.headers.update(err.headers or {})
    return page


def _local(target: str) -> str:
    """Only a path of this site: never another origin (`//host`, `https://...`, `/\\host`)."""
    return target if target.startswith("/") and not target.startswith(("//", "/\\")) else "/"


async def _form(request: Request) -> dict[str, str]:
    body = await request.body()
    if len(body) > FORM_LIMIT:
        return {}
    return {
        k: v[0] for k, v in parse_qs(body.decode("utf-8", "replace"), max_num_fields=10).items()
    }
