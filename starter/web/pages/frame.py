"""What every page is made of: the frame a page renders in (who is signed in, the CSRF token),
the error page, the way to sign-in, a service call read as a page reads it, and one research as
the lists show it. In one module so the page modules import it and never each other.
"""

from __future__ import annotations

import html
from collections.abc import Awaitable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar
from urllib.parse import quote, urlsplit

from fastapi import Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from starter.client.errors import ClientError
from starter.client.temporal import one_line
from starter.web.deps import ApiError, Backend
from starter.web.identity import auth
from starter.web.identity.oidc import shown_user
from starter.web.presentation.templating import templates

T = TypeVar("T")


class PageError(Exception):
    """What the API said instead of data: its status and its one line."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def backend(request: Request) -> Backend:
    found: Backend = request.app.state.backend
    return found


def page(
    request: Request, name: str, user: str | None, status: int = 200, **context: Any
) -> Response:
    """Template NAME in the frame every page has: the user, whether a session cookie signed them
    in (the sign-out button), the CSRF token its forms carry."""
    context.setdefault("here", "")
    who = auth.identify(request)
    access = auth.access_of(request)
    context.setdefault("tokens", bool(access.tokens))  # the sign-in page's token form
    context.setdefault("provider", access.oidc.settings.name if access.oidc else None)
    return templates.TemplateResponse(
        request,
        name,
        {
            "user": user,
            "user_shown": shown_user(user) if user else None,  # a provider user's claim alone
            "signed_in": who is not None and who.via == "cookie",
            "csrf": auth.csrf_token(request),
            **context,
        },
        status_code=status,
    )


def error_page(
    request: Request, user: str, status: int, message: str, back: str | None = None
) -> Response:
    """The error page: a title for the status and the one line (an unknown research's, as the
    API's 404, never says whether it is someone else's)."""
    title = {404: "No such research", 503: "The research service is unavailable"}.get(
        status, "Something went wrong" if back is None else "That did not work"
    )
    if status == 404 and back is None:
        message = "There is no research with that id among yours."
    return page(request, "error.html", user, status=status, title=title, message=message, back=back)


def fragment_error(err: PageError) -> Response:
    return HTMLResponse(f'<p class="error">{html.escape(err.message)}</p>', status_code=err.status)


def to_signin(request: Request, target: str | None = None) -> Response:
    """To the sign-in page, and back to TARGET (this page) after it."""
    if target is None:
        target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    return RedirectResponse(f"/signin?next={quote(target, safe='')}", status_code=303)


def local_path(target: str) -> str:
    """Only a path of this site: never another origin (`//host`, `https://...`, `/\\host`): where
    a sign-in (with a token or at the identity provider) may send the browser after it. Browsers
    drop tabs and newlines from a URL and read `\\` as `/`, so `/<tab>/evil.example` is
    `//evil.example` to them: a path with any space, control character or backslash is
    refused too, and one that still parses with a scheme or a host."""
    if not target.startswith("/") or target.startswith("//"):
        return "/"
    if "\\" in target or any(c.isspace() or not c.isprintable() for c in target):
        return "/"
    parts = urlsplit(target)
    return "/" if parts.scheme or parts.netloc else target


async def read(call: Awaitable[T]) -> T:
    """What the service answers; what the API would answer instead, as a `PageError`."""
    try:
        return await call
    except ApiError as err:
        raise PageError(err.status, err.message) from None
    except ClientError as err:
        failure = ApiError.of(err)
        raise PageError(failure.status, failure.message) from None
    except TimeoutError as err:
        raise PageError(503, one_line(str(err) or "Temporal did not answer")) from None


@dataclass(frozen=True)
class Listed:
    """One research as the home page's and the library's lists show it."""

    id: str
    question: str
    #: What the lists call it: the title its owner gave it, else its question.
    title: str
    stage: str
    outcome: str
    sources: int | None
    claims: int | None
    supported: int | None
    when: datetime | None


def listed(item: dict[str, Any]) -> Listed:
    """One research as the lists show it, from the API's list or library entry."""
    stage = str(item.get("stage") or item.get("outcome") or item.get("status") or "")
    when = next(
        (v for v in (item.get(k) for k in ("closed_at", "finished_at", "started_at")) if v), None
    )
    question = " ".join(str(item.get("question") or item.get("query") or "").split())
    return Listed(
        id=str(item.get("id") or item.get("workflow_id") or ""),
        question=question,
        title=" ".join(str(item.get("title") or "").split()) or question,
        stage=stage,
        outcome=str(item.get("outcome") or stage),
        sources=item.get("sources"),
        claims=item.get("claims"),
        supported=item.get("supported"),
        when=_when(when),
    )


def _when(value: Any) -> datetime | None:
    try:
        return datetime.fromisoformat(str(value)) if value else None
    except ValueError:
        return None
