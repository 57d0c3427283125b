"""Python's double-underscore names stay names: `__init__.py` and `__exit__()` are text, never
"init.py" in bold.

CommonMark reads `__exit__()` as strong emphasis around "exit", and the research corpus is Python's
own documentation, so reports name `__enter__`, `__init__.py` and `object.__dict__` all the time.
One inline rule, used by every reading of a report's markdown (the page, the draft under review,
the HTML, Word and PDF downloads): an identifier that starts with underscores and has a double
underscore after a letter or digit (`__init__`, `__exit__`, `_x__y`) is taken as it is. `_word_`
and `__bold words__` are still emphasis; `__word__` alone is read as the name it looks like.
"""

from __future__ import annotations

import re

from markdown_it import MarkdownIt
from markdown_it.rules_inline import StateInline

_IDENTIFIER = re.compile(r"_+[^\W_]\w*")
_DUNDER_AFTER_WORD = re.compile(r"[^\W_]__")


def literal_names(md: MarkdownIt) -> MarkdownIt:
    """MD with the rule that keeps double-underscore names literal (before emphasis)."""
    md.inline.ruler.before("emphasis", "literal_names", _name)
    return md


def _name(state: StateInline, silent: bool) -> bool:
    start = state.pos
    if state.src[start] != "_" or (start > 0 and _word(state.src[start - 1])):
        return False
    found = _IDENTIFIER.match(state.src, start)
    if found is None or not _DUNDER_AFTER_WORD.search(found.group(0)):
        return False
    if not silent:
        state.push("text", "", 0).content = found.group(0)
    state.pos = found.end()
    return True


def _word(char: str) -> bool:
    return char.isalnum() or char == "_"
