"""A JSON body is read as JSON whatever its Content-Type says.

`curl -d '{"question": "..."}'` sends `application/x-www-form-urlencoded`, and scripts often send
no type at all; FastAPI would then refuse the body as "not a JSON object". Every body the API
takes is JSON (but an uploaded document, `POST /api/documents`, which is multipart), so a POST
under /api/ without a JSON content type is read as JSON: valid JSON is taken, anything else gets
the one-line "the body is not valid JSON" (PATCH bodies alike). Cross-site forms gain
nothing: a state-changing request a browser sends still needs the page's CSRF token.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send

from starter.web.guard.shield import UPLOAD_PATHS


class JsonBody:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] == "http"
            and scope.get("method") in ("POST", "PATCH")
            and scope.get("path", "").startswith("/api/")
            and scope.get("path") not in UPLOAD_PATHS  # a document comes as multipart/form-data
        ):
            headers = [(k, v) for k, v in scope.get("headers", []) if k.lower() != b"content-type"]
            given = dict(scope.get("headers", [])).get(b"content-type", b"")
            if b"json" not in given.lower():
                scope = {**scope, "headers": [*headers, (b"content-type", b"application/json")]}
        await self.app(scope, receive, send)
