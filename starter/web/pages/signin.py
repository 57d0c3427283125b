"""Signing in and out (`/signin`, `/signout`).

A sign-in post another site made is refused (login CSRF: `auth.cross_site_signin`); wrong tokens
are rate-limited per client and sign-ins per user (429 with Retry-After, on the form); signing
out ends the session at once, on every replica (starter/web/identity/sessions.py).
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from starlette.exceptions import HTTPException

from starter.web.identity import auth
from starter.web.pages.forms import read_form
from starter.web.pages.frame import local_path, page
from starter.web.pages.oidc_signin import signed_out_there

router = APIRouter(include_in_schema=False)
#: A sign-in form is a token and a path: anything longer is not one.
FORM_LIMIT = 8192


@router.get("/signin", response_class=HTMLResponse)
async def signin_form(request: Request, next: str = "/") -> Response:  # noqa: A002 - the query's name
    return page(request, "signin.html", None, next=local_path(next), error=None)


@router.post("/signin", response_class=HTMLResponse)
async def signin(request: Request) -> Response:
    form = await read_form(request, FORM_LIMIT, fields=10)
    target = local_path(form.get("next", "/"))
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
        return page(
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
    form = await read_form(request, FORM_LIMIT, fields=10)
    if auth.user_from_request(request) is not None and form.get("csrf") != auth.csrf_token(request):
        return HTMLResponse(
            "Refused: the form did not come from this site's page.", status_code=403
        )
    response = await signed_out_there(request) or RedirectResponse("/signin", status_code=303)
    auth.end_session(response)
    return response


def _limited(request: Request, target: str, err: HTTPException) -> Response:
    answer = page(request, "signin.html", None, status=429, next=target, error=str(err.detail))
    answer.headers.update(err.headers or {})
    return answer
