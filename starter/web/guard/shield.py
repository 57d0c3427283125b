"""What every request meets before any route, parser or token check (pure ASGI, so streamed
responses pass untouched):

- **Bodies capped as they arrive.** The whole body is read here, chunk by chunk, before the app is
  called: one byte over MAX_BODY_BYTES (UPLOAD_BODY_BYTES for an uploaded document) (whatever `Content-Length` says, chunked or not) and the
  answer is 413 with `Connection: close`, having kept at most the cap in memory. A body that comes
  too slowly (nothing for BODY_IDLE_S, or not complete within BODY_TOTAL_S) is a 408. The app then
  gets the body replayed from memory; what follows (a client leaving) comes from the connection.
- **The token before the body** (starter/web/guard/admission.py): an API write or an upload with no
  valid token is answered 401 from its headers, its body never read; a signed-in user's upload
  holds its size from the bytes in flight while it lasts (503, or 429 per user, beyond).
- **Own host names only when access control is off.** Without tokens anyone who reaches the port is
  the one user, so a page of another site that makes the browser resolve its name to 127.0.0.1
  (DNS rebinding) must not be served: the `Host` must be `localhost`, a loopback address, or a
  name of RESEARCH_ALLOWED_HOSTS (comma-separated), else 421.
- **Nothing signed-in is cached.** Every response but the static files gets
  `Cache-Control: no-store` (unless it set its own), so a shared computer's back button or a proxy
  never shows one user's pages to the next.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
from collections.abc import Iterable

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from activities.corpus.uploads import UPLOAD_MAX_BYTES
from starter.web.guard.admission import UPLOAD_PATHS, Refusal, UploadsInFlight, who_sends

#: A question is 5,000 characters at most, a plan review a few kilobytes.
MAX_BODY_BYTES = 256 * 1024
#: The paths that take an uploaded document (the API's and the home page's form): the document's
#: limit plus room for the multipart framing, and what a larger body is told.
UPLOAD_BODY_BYTES = UPLOAD_MAX_BYTES + 64 * 1024
UPLOAD_TOO_LARGE = (
    f"the document is larger than {UPLOAD_MAX_BYTES // (1024 * 1024)} MB: upload a smaller file"
)
#: `POST /api/check` takes a text and its sources' texts (starter/client/citations_check.py bounds each).
CHECK_PATHS = ("/api/check", "/check")  # the API, and the Check citations page's form
CHECK_BODY_BYTES = 2 * 1024 * 1024
#: A body that pauses this long, or takes longer than BODY_TOTAL_S in all, is refused (408).
BODY_IDLE_S = 10.0
BODY_TOTAL_S = 30.0
#: Responses that may be cached: the static files (they hold nothing of a user's).
CACHEABLE_PREFIXES = ("/static/",)


class Shield:
    def __init__(
        self,
        app: ASGIApp,
        *,
        open_mode: bool = False,
        allowed_hosts: Iterable[str] = (),
        max_body: int = MAX_BODY_BYTES,
        body_idle_s: float | None = None,
        body_total_s: float | None = None,
        uploads: UploadsInFlight | None = None,
    ) -> None:
        self.app = app
        self.open_mode = open_mode
        self.allowed_hosts = {h.strip().lower().rstrip(".") for h in allowed_hosts if h.strip()}
        self.max_body = max_body
        self.body_idle_s = body_idle_s
        self.body_total_s = body_total_s
        self.uploads = uploads

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        if self.open_mode and not self.own_host(_header(scope, b"host")):
            return await _answer(
                send, 421, "this server only answers to its own host names (localhost, loopback)"
            )
        limit = body_limit(scope, self.max_body)
        declared = _header(scope, b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > limit):
            return await self._too_large(send, scope)
        sender = await who_sends(scope)  # the token before the body (admission.py)
        if isinstance(sender, Refusal):
            return await self._refuse(receive, send, sender, limit)
        held = int(declared) if declared is not None else limit
        if sender is None or self.uploads is None or scope.get("path") not in UPLOAD_PATHS:
            return await self._serve(scope, receive, send)
        refused = self.uploads.reserve(sender, held)
        if refused is not None:
            return await self._refuse(receive, send, refused, limit)
        try:
            await self._serve(scope, receive, send)
        finally:
            self.uploads.release(sender, held)

    async def _serve(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The body read (capped, in time), then the app called with it replayed."""
        body = await self._read_body(scope, receive, send)
        if body is None:
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        cacheable = scope.get("path", "").startswith(CACHEABLE_PREFIXES)

        async def no_store(message: Message) -> None:
            if message["type"] == "http.response.start" and not cacheable:
                headers = list(message.get("headers", []))
                if not any(k.lower() == b"cache-control" for k, _ in headers):
                    headers.append((b"cache-control", b"no-store"))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, replay, no_store)

    def own_host(self, host: str | None) -> bool:
        """`localhost`, a loopback address or an allowed name, with or without a port."""
        if not host:
            return False
        name = host.strip().lower()
        if name.startswith("["):  # [::1]:8000
            name = name[1 : name.find("]")] if "]" in name else name
        elif name.count(":") == 1:
            name = name.partition(":")[0]
        name = name.rstrip(".")
        if name == "localhost" or name.endswith(".localhost") or name in self.allowed_hosts:
            return True
        try:
            return ipaddress.ip_address(name).is_loopback
        except ValueError:
            return False

    async def _read_body(self, scope: Scope, receive: Receive, send: Send) -> bytes | None:
        """The whole body, or None when it was refused (the answer already sent)."""
        chunks: list[bytes] = []
        size = 0
        loop = asyncio.get_running_loop()
        idle = self.body_idle_s or BODY_IDLE_S
        deadline = loop.time() + (self.body_total_s or BODY_TOTAL_S)
        while True:
            wait = min(idle, deadline - loop.time())
            try:
                if wait <= 0:
                    raise TimeoutError
                message = await asyncio.wait_for(receive(), wait)
            except TimeoutError:
                await _answer(send, 408, "the request body came too slowly")
                return None
            if message["type"] == "http.disconnect":
                return None
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > body_limit(scope, self.max_body):
                await self._too_large(send, scope)
                return None
            if chunk:
                chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)

    async def _refuse(self, receive: Receive, send: Send, refusal: Refusal, limit: int) -> None:
        """REFUSAL's whole answer at once; then what the client still sends of its body is read
        and dropped (at most LIMIT bytes, within the body's time limits: nothing is kept), so a
        client that sends its body before reading reads the answer, not a reset connection."""
        await _answer(send, refusal.status, refusal.message, refusal.headers, finish=False)
        await self._drain(receive, limit)
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _drain(self, receive: Receive, limit: int) -> None:
        loop = asyncio.get_running_loop()
        idle = self.body_idle_s or BODY_IDLE_S
        deadline = loop.time() + (self.body_total_s or BODY_TOTAL_S)
        size, more = 0, True
        while more and size <= limit:
            wait = min(idle, deadline - loop.time())
            try:
                if wait <= 0:
                    return
                message = await asyncio.wait_for(receive(), wait)
            except TimeoutError:
                return
            size += len(message.get("body", b""))
            more = message["type"] == "http.request" and message.get("more_body", False)

    async def _too_large(self, send: Send, scope: Scope) -> None:
        await _answer(send, 413, too_large(scope, self.max_body))


def body_limit(scope: Scope, default: int = MAX_BODY_BYTES) -> int:
    """The largest body the request's path takes: an upload's, a check's, or DEFAULT."""
    if scope.get("path") in UPLOAD_PATHS:
        return UPLOAD_BODY_BYTES
    return CHECK_BODY_BYTES if scope.get("path") in CHECK_PATHS else default


def too_large(scope: Scope, default: int = MAX_BODY_BYTES) -> str:
    if scope.get("path") in UPLOAD_PATHS:
        return UPLOAD_TOO_LARGE
    return f"the request body is larger than {body_limit(scope, default) // 1024} KB"


async def _answer(
    send: Send,
    status: int,
    message: str,
    headers: dict[str, str] | None = None,
    finish: bool = True,
) -> None:
    """A one-line JSON error that also closes the connection (the rest of a refused body is
    never read); FINISH false leaves the response open (its body all sent) for `_refuse`."""
    body = json.dumps({"error": message}).encode()
    extra = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in (headers or {}).items()]
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
                (b"cache-control", b"no-store"),
                *extra,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body, "more_body": not finish})


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key == name:
            return bytes(value).decode("latin-1")
    return None
