"""No one can lock every user out. Wrong tokens from many addresses (each below its
own limit; the address picked with X-Forwarded-For, which uvicorn believes from 127.0.0.1 under
the default FORWARDED_ALLOW_IPS) set off the backstop: wrong tokens are then refused, while a right
Bearer token and a right sign-in still pass."""

from __future__ import annotations

import httpx

from starter.web.identity.sessions import ALL_FAILURES, MAX_FAILURES
from tests.starter.web.conftest import TOKENS, WebWorker, one_line_error, running_app, web_config


async def test_failures_from_many_addresses_never_refuse_a_right_token(
    web_worker: WebWorker,
) -> None:
    per_address = MAX_FAILURES - 3
    addresses = ALL_FAILURES // per_address + 2
    with running_app(web_config(web_worker, TOKENS), TOKENS) as server:
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as client:
            statuses = set()
            for a in range(addresses):
                for _ in range(per_address):
                    wrong = await client.get(
                        "/api/research",
                        headers={
                            "Authorization": "Bearer guessed-token-0123456789",
                            "X-Forwarded-For": f"198.51.{a // 200}.{a % 200 + 1}",
                        },
                    )
                    statuses.add(wrong.status_code)
            assert statuses == {401, 429}  # the backstop went off along the way
            fresh = {"X-Forwarded-For": "203.0.113.77"}
            still_wrong = await client.get(
                "/api/research",
                headers={**fresh, "Authorization": "Bearer guessed-token-0123456789"},
            )
            assert "too many" in one_line_error(still_wrong, 429)
            right = await client.get("/api/research", headers={**fresh, **server.auth("bob")})
            assert right.status_code == 200, right.text
            signed = await client.post(
                "/signin",
                data={"token": TOKENS["alice"], "next": "/"},
                headers={"X-Forwarded-For": "203.0.113.78"},
            )
            assert signed.status_code == 303, signed.text
            own = await client.get("/api/research", headers=server.auth("alice"))
            assert own.status_code == 200
