"""Secrets out of every message: one helper for whatever an error text or a configured URL touches.

Endpoints are often reached as `http://user:password@host/...` (a protected SearxNG, a proxy in
front of an LLM) or with a key in the query (`?api_key=...`). Such a URL ends up in error texts,
and error texts travel far: worker logs, workflow history (failures, notes), the report, the
library. So every error text that may carry a URL passes through `redact` before it leaves the
code that made it, and the workflow redacts what it writes into notes once more.

Masked, as `***`: the userinfo of any URL (`scheme://user:pass@` -> `scheme://***@`), the values
of query parameters that name a secret (`key`, `api_key`, `apikey`, `token`, `access_token`,
`secret`, `password`, `sig`, `signature`, `auth`), `Bearer` tokens, key-like strings (`sk-...`),
and any literal secret the caller passes. Pure: it runs inside the workflow too.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

MASK = "***"

_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@?#]+@")
_SECRET_PARAM = re.compile(
    r"(?i)([?&;](?:api[_-]?key|key|apikey|access[_-]?token|token|secret|password|passwd|sig|signature|auth)=)"
    r"[^&;#\s'\"]+"
)
_BEARER = re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/=-]{8,}")
_KEY_LIKE = re.compile(r"\b(sk|pk|rk)-[A-Za-z0-9_\-]{6,}")


def redact(text: str, secrets: Iterable[str | None] = ()) -> str:
    """`text` with credentials masked; `secrets` are literal values to mask wherever they appear."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, MASK)
    text = _USERINFO.sub(rf"\1{MASK}@", text)
    text = _SECRET_PARAM.sub(rf"\1{MASK}", text)
    text = _BEARER.sub(rf"\1{MASK}", text)
    return _KEY_LIKE.sub(rf"\1-{MASK}", text)
