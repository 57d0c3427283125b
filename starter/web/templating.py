"""The one templating object every page renders with: Jinja2 over `templates/`, autoescaped.

In a module of its own so a page module can use it without importing another page module (the
standing pages and the research page import each other's context builders otherwise)."""

from __future__ import annotations

from pathlib import Path

from fastapi.templating import Jinja2Templates
from jinja2 import Environment, FileSystemLoader

HERE = Path(__file__).parent
templates = Jinja2Templates(
    env=Environment(
        loader=FileSystemLoader(HERE / "templates"),
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
)
