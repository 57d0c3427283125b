"""A second line of defence for the terminal: nothing a source wrote can drive it.

Text from the web reaches the terminal in titles, reports and extracted pages. Control characters
in it (ESC sequences that retitle the window, clear the screen or rewrite what was printed; BEL;
C1 controls that some terminals obey) are removed from everything the starter prints. Newlines
and tabs stay. The first line of defence is at extraction time (sources are stored without them);
this one also covers what was stored before, or came from anywhere else.
"""

from __future__ import annotations

import re
from typing import TextIO

#: ESC sequences (CSI, OSC up to BEL/ST, two-character ones), then any other C0 control but
#: tab and newline, DEL, and the C1 controls.
_CONTROL = re.compile(
    r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[PX^_][^\x1b]*(?:\x1b\\)?|[ -/]*[0-~])?"
    r"|[\x00-\x08\x0b-\x1f\x7f-\x9f]"
)


def clean(text: str) -> str:
    return _CONTROL.sub("", text)


class CleanStream:
    """A text stream that writes through `clean`; everything else is the wrapped stream's."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(clean(text))
        return len(text)

    def __getattr__(self, name: str) -> object:
        return getattr(self._stream, name)
