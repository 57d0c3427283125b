"""A second line of defence for the terminal: nothing a source wrote can drive it.

Text from the web reaches the terminal in titles, reports and extracted pages. Control characters
in it (ESC sequences that retitle the window, clear the screen or rewrite what was printed; BEL;
C1 controls that some terminals obey) and bidi overrides and isolates (U+202A-U+202E,
U+2066-U+2069: text that reads in another order than it runs) are removed from everything the
starter prints, and from what it sends (questions, answers, reviews) and writes (report files).
Newlines and tabs stay. The first line of defence is at extraction time (sources are stored
without them); this one also covers what was stored before, or came from anywhere else.

Names (file names, ids) are shown with those characters escaped instead (`escape`), so a name
with a newline stays one line and can be told apart from another.
"""

from __future__ import annotations

import re
from typing import TextIO

#: Bidi embeddings, overrides and isolates, and lone surrogates (no encoding can write them).
_UNSAFE = "\u202a-\u202e\u2066-\u2069\ud800-\udfff"
#: ESC sequences (CSI, OSC up to BEL/ST, two-character ones), then any other C0 control but
#: tab and newline, DEL, the C1 controls, and the characters above.
_CONTROL = re.compile(
    r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[PX^_][^\x1b]*(?:\x1b\\)?|[ -/]*[0-~])?"
    f"|[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f{_UNSAFE}]"
)
#: What `escape` shows escaped: every control character (tab and newline too) and the above.
_ESCAPED = re.compile(f"[\\x00-\\x1f\\x7f-\\x9f{_UNSAFE}]")


def clean(text: str) -> str:
    """TEXT without control sequences and characters (tab and newline kept) or bidi overrides."""
    return _CONTROL.sub("", text)


def escape(name: str) -> str:
    """NAME on one line, each control character or bidi override shown as its escape (`\\n`,
    `\\x1b`, `\\u202e`), as Python's repr shows them."""
    return _ESCAPED.sub(lambda found: found.group().encode("unicode_escape").decode("ascii"), name)


class CleanStream:
    """A text stream that writes through `clean`; everything else is the wrapped stream's."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(clean(text))
        return len(text)

    def __getattr__(self, name: str) -> object:
        return getattr(self._stream, name)
