"""Secrets out of every message: one helper for whatever an error text or a configured URL touches.

Endpoints are often reached as `http://user:password@host/...` (a protected SearxNG, a proxy in
front of an LLM) or with a key in the query (`?api_key=...`). Such a URL ends up in error texts,
and error texts travel far: worker logs, workflow history (failures, notes), the report, the
library. So every error text that may carry a URL passes through `redact` before it leaves the
code that made it, and the workflow redacts what it writes into notes once more.

Masked, as `***`: the userinfo of any URL (`scheme://user:pass@` -> `scheme://***@`), the values
of query (or fragment) parameters that name a secret (`key`, `api_key`, `apikey`, `token`,
`access_token`, `secret`, `password`, `sig`, `signature`, `auth`), every path segment, query value
or fragment of a URL that looks like a token (`https://host/v1/AbC0...xyz9/chat`: a run of 16 or
more letters and digits with both in it, or of 32 or more letters in both cases), `Bearer` tokens,
key-like strings (`sk-...`, `gsk_...`, `hf_...`, `ghp_...`, `AIza...`), and any literal secret the
caller passes. Pure: it runs inside the workflow too.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

MASK = "***"

_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@?#]+@")
_SECRET_PARAM = re.compile(
    r"(?i)([?&;#](?:api[_-]?key|key|apikey|access[_-]?token|token|secret|password|passwd|sig|signature|auth)=)"
    r"[^&;#\s'\"]+"
)
_BEARER = re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/=-]{8,}")
_KEY_LIKE = re.compile(r"\b(sk|pk|rk)-[A-Za-z0-9_\-]{6,}")
_PREFIXED_KEY = re.compile(
    r"\b((?:gsk|ghp|gho|ghu|ghs|ghr|glpat|hf|xai|xox[abpr]|xapp)[-_])[A-Za-z0-9_\-]{8,}|\b(AIza)[0-9A-Za-z_\-]{20,}"
)
_URL = re.compile(r"(?i)\b[a-z][a-z0-9+.-]*://[^/\s'\"<>]*(/[^\s'\"<>]*)")
_PIECE = re.compile(r"[^/?&=#;]+")
_RUN = re.compile(r"[A-Za-z0-9]{16,}")


def redact(text: str, secrets: Iterable[str | None] = ()) -> str:
    """`text` with credentials masked; `secrets` are literal values to mask wherever they appear."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, MASK)
    text = _USERINFO.sub(rf"\1{MASK}@", text)
    text = _URL.sub(_masked_url, text)
    text = _SECRET_PARAM.sub(rf"\1{MASK}", text)
    text = _BEARER.sub(rf"\1{MASK}", text)
    text = _PREFIXED_KEY.sub(lambda m: (m.group(1) or m.group(2)) + MASK, text)
    return _KEY_LIKE.sub(rf"\1-{MASK}", text)


def _masked_url(url: re.Match[str]) -> str:
    """The URL with each path segment, query value and fragment that looks like a token masked."""
    start = url.start(1) - url.start()
    whole = url.group(0)
    tail = _PIECE.sub(
        lambda piece: MASK if _token_like(piece.group(0)) else piece.group(0), whole[start:]
    )
    return whole[:start] + tail


def _token_like(piece: str) -> bool:
    """A run of 16+ letters and digits with both in it (keys, hashes, ids that open doors), or
    of 32+ letters whose case changes as often as chance would have it (random base64, not
    CamelCase); never a word, a version, a date or a model name with hyphens."""
    for run in _RUN.findall(piece):
        if any(c.isdigit() for c in run) and not run.isdigit():
            return True
        switches = sum(a.isupper() != b.isupper() for a, b in zip(run, run[1:], strict=False))
        if len(run) >= 32 and switches * 3 >= len(run):
            return True
    return False
