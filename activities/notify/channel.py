"""What a notification channel is: the targets it has for a notice (opaque keys `KIND` or
`KIND:N`, never an address or a secret: they go into history) and one delivery to one of them,
returning a short detail for the log ("HTTP 200")."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from settings import Settings
from workflows.standing_messages import DeliverInput, Notice


@dataclass(frozen=True)
class Channel:
    #: The targets' prefix: what `deliver_notification` picks the channel by.
    kind: str
    targets: Callable[[Settings, Notice], list[str]]
    deliver: Callable[[Settings, DeliverInput], Awaitable[str]]
