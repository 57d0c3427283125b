"""What a follow-up question is about, read from the earlier research it follows.

"Tell me more about the second point" means nothing to a planner or a search engine; the second
point of the earlier report does. So a follow-up's research question carries the point it refers
to (a numbered or bulleted item, or a section, of the previous answer), or else the earlier
question. Pure and deterministic: it runs inside the workflow.
"""

from __future__ import annotations

import re

from workflows.kit.citations import CITATION
from workflows.models import Message, Speaker

#: Ordinal words and what they count to (-1: the last); the offline engine's routing reads them too.
ORDINALS = {
    "first": 1,
    "1st": 1,
    "second": 2,
    "2nd": 2,
    "third": 3,
    "3rd": 3,
    "fourth": 4,
    "4th": 4,
    "fifth": 5,
    "5th": 5,
    "sixth": 6,
    "6th": 6,
    "seventh": 7,
    "7th": 7,
    "eighth": 8,
    "8th": 8,
    "ninth": 9,
    "9th": 9,
    "tenth": 10,
    "10th": 10,
    "last": -1,
}
#: The words that name a point: "the second point", "item 3", and the words people use as often:
#: "the second one", "the last idea", "the third example", "idea 2".
_NOUNS = r"(point|item|section|step|option|bullet|finding|part|idea|thing|aspect|example|reason)s?"
_ORDINAL_REF = re.compile(
    rf"\b({'|'.join(ORDINALS)})\s+(point|item|section|step|option|bullet|finding|part|idea|"
    r"thing|aspect|example|reason|one)s?\b",
    re.I,
)
_NUMBERED_REF = re.compile(rf"\b{_NOUNS}\s*#?(\d{{1,2}})\b", re.I)
#: What names a point of the previous answer ("the second point", "item 3", "the last one"): the
#: offline engine replaces it by the point's subject, so both read the same references.
POINTER_PATTERNS = (_ORDINAL_REF, _NUMBERED_REF)
_ITEM = re.compile(r"^\s*(?:\d{1,2}[.)]|[-*•])\s+(\S.*)$")
_HEADING = re.compile(r"^\s{0,3}#{2,6}\s+(\S.*)$")
_NOT_A_POINT = re.compile(r"^(summary|answer|sources|references|bibliography)\b", re.I)
_CITATION = re.compile(r"\s*" + CITATION.pattern)  # a citation with the space before it
CONTEXT_CHARS = 300


def context(query: str, history: list[Message]) -> str:
    """What the follow-up refers to: the point of the previous answer it names, else the earlier
    question; "" when there is no earlier conversation."""
    return (
        referent(query, history)
        or next((" ".join(m.content.split()) for m in history if m.role is Speaker.USER), "")[
            :CONTEXT_CHARS
        ]
    )


def referent(query: str, history: list[Message]) -> str:
    """The item or section of the previous answer that "the second point", "section 3" or "the
    last item" names; "" when the query names none or the answer has no such item."""
    previous = next((m.content for m in reversed(history) if m.role is Speaker.ASSISTANT), "")
    found = _ORDINAL_REF.search(query)
    if found:
        noun, index = found.group(2).lower(), ORDINALS[found.group(1).lower()]
    else:
        numbered = _NUMBERED_REF.search(query)
        if numbered is None:
            return ""
        noun, index = numbered.group(1).lower(), int(numbered.group(2))
    items, sections = _points(previous)
    pool = sections if noun == "section" else (items or sections)
    if not pool or index == 0 or index > len(pool):
        return ""
    point = pool[index - 1] if index > 0 else pool[-1]
    return " ".join(_CITATION.sub("", point).replace("*", "").split())[:CONTEXT_CHARS]


def _points(answer: str) -> tuple[list[str], list[str]]:
    """(list items, section headings) of an answer, leaving out its sources list."""
    items: list[str] = []
    sections: list[str] = []
    in_sources = False
    for line in answer.splitlines():
        heading = _HEADING.match(line)
        if heading:
            title = heading.group(1).strip()
            in_sources = bool(re.match(r"(sources|references|bibliography)\b", title, re.I))
            if not _NOT_A_POINT.match(title):
                sections.append(title)
            continue
        item = _ITEM.match(line)
        if item and not in_sources:
            items.append(item.group(1).strip())
    return items, sections
