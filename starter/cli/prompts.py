"""`python -m starter prompts push`: the repository's role prompts into Langfuse prompt management."""

from __future__ import annotations

import argparse
import asyncio

from activities import tracing
from activities.prompts.loader import push_prompts
from starter.cli.progress import say
from starter.client.errors import ClientError, Kind
from starter.client.temporal import one_line


async def push(args: argparse.Namespace, session: object) -> int:
    """Each role prompt becomes (or stays) the `production` version in Langfuse; pushing twice
    creates nothing new. Needs the Langfuse keys; Temporal is not involved."""
    config = session.cfg  # type: ignore[attr-defined]
    langfuse = tracing.langfuse_for(config)
    if langfuse is None:
        raise ClientError(
            "prompts push needs LANGFUSE_PUBLIC_KEY and LANGFUSE_SECRET_KEY "
            "(and LANGFUSE_HOST for a self-hosted Langfuse)",
            Kind.INVALID,
        )
    host = config.langfuse.host or "https://cloud.langfuse.com"
    try:
        lines = await asyncio.to_thread(push_prompts, langfuse)
    except Exception as err:  # noqa: BLE001 - every Langfuse failure becomes one line
        raise ClientError(_why(err, host), Kind.UNREACHABLE) from None
    for line in lines:
        say(line)
    return 0


def _why(err: Exception, host: str) -> str:
    import httpx
    from langfuse.api import AccessDeniedError, UnauthorizedError

    if isinstance(err, (UnauthorizedError, AccessDeniedError)):
        return f"Langfuse at {host} rejected the keys (check LANGFUSE_PUBLIC_KEY and LANGFUSE_SECRET_KEY)"
    if isinstance(err, httpx.HTTPError):
        return f"cannot reach Langfuse at {host} ({type(err).__name__})"
    return f"Langfuse at {host}: {one_line(str(err))[:300]}"
