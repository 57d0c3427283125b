"""What the client hands a front end, as people may see it: one function, `public`.

A research keeps the real `file://` URLs of its local sources (reading a page needs them) and
whatever text its sources and models wrote; a person must never see a server path, nor a control
or bidi character that makes a page or a terminal say what it does not. So every result, status,
event and stored report leaves the client through `public` (cleaned as the downloads clean,
local sources named by the one rule of storage/public_names.py), and no front end names a source
itself: a front end that forgot would otherwise be the one that leaks.
"""

from __future__ import annotations

from typing import Any, TypeVar, cast

from pydantic import BaseModel

from settings import Settings
from starter.client.terminal import clean as without_sequences
from starter.exports import clean_model
from starter.exports.public import public_for
from storage.public_names import PublicNames
from workflows.models import ResearchResult

M = TypeVar("M", bound=BaseModel)


def public(model: M, cfg: Settings) -> M:
    """MODEL (a result, a status, an event, what changed) as people may see it under the settings
    CFG: an escape sequence gone whole (not its ESC alone, leaving `[2J` to read), then cleaned as
    the downloads clean, then local sources by name."""
    model = type(model).model_validate(_whole_sequences_gone(model.model_dump()))
    if isinstance(model, ResearchResult):
        return cast(M, public_for(model, cfg))  # local sources marked `local` too
    return PublicNames.of(cfg).model(clean_model(model))


def _whole_sequences_gone(value: Any) -> Any:
    if isinstance(value, str):  # a carriage return is a line's end, as the downloads read it
        return without_sequences(value.replace("\r\n", "\n").replace("\r", "\n"))
    if isinstance(value, dict):
        return {k: _whole_sequences_gone(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_whole_sequences_gone(v) for v in value]
    return value


def public_all(models: list[M], cfg: Settings) -> list[M]:
    """Each of MODELS made `public` (an event list, as it is sent)."""
    return [public(model, cfg) for model in models]
