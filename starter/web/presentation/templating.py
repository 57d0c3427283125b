"""The one templating object every page renders with: Jinja2 over `templates/`, autoescaped.

In a module of its own so a page module can use it without importing another page module (the
standing pages and the research page import each other's context builders otherwise)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from fastapi.templating import Jinja2Templates
from jinja2 import Environment, FileSystemLoader

HERE = Path(__file__).parents[1]  # starter/web: its templates/ folder
templates = Jinja2Templates(
    env=Environment(
        loader=FileSystemLoader(HERE / "templates"),
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
)


def when(value: object) -> str:
    """An ISO time as people read it, in UTC: "Mon 30 Nov 2026, 08:00 UTC" (the raw value stays
    in the `<time datetime>` beside it for scripts and screen readers)."""
    try:
        moment = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return str(value)
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC)
    return moment.strftime("%a %d %b %Y, %H:%M UTC")


templates.env.filters["when"] = when
