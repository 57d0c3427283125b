"""Lists of named things of one kind: "Python's del, return and pass statements", "the
heapreplace and heappushpop functions".

The items of such a list are names, often words that are function words elsewhere (`for`,
`with`, `pass`, `return`, `in`), and the noun after the list says what kind of thing each is. Read
as a plain enumeration, "del" or "return" is dropped as a verb and the list is not seen: the
question becomes one step, whose one search reads three documents for three things, or finds
none of them when every name is a stop word ("for, while and with statements"). Read as a list
of one kind, each item is a step of its own named as the documentation names it: "the del
statement".
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: Nouns that name a kind of thing documentation is organised by (one section or page each).
KIND_NOUNS = (
    "statements keywords functions methods modules operators clauses classes types loops "
    "commands options flags decorators attributes exceptions fields variables packages "
    "builtins macros traits crates directives"
).split()
_NAME = r"`?[A-Za-z_][\w.]*(?:\(\))?`?"
_LIST = re.compile(
    rf"(?:(?P<owner>[\w.]+)['’]s\s+)?"
    rf"(?P<items>{_NAME}(?:\s*,\s*{_NAME})*\s*,?\s+(?:and|or)\s+{_NAME})\s+"
    rf"(?P<kind>{'|'.join(KIND_NOUNS)})\b(?P<rest>.*)$",
    re.I,
)
_COMPARED = re.compile(r"\b(?:differ|difference|compare|vs\b|versus)", re.I)
_SCOPE = re.compile(r"\b((?:in|for|with|on|under|within|using)\s+.+)$", re.I)


def singular(noun: str) -> str:
    """ "classes" → "class", "libraries" → "library", "statements" → "statement"."""
    if noun.endswith("ies"):
        return noun[:-3] + "y"
    if noun.endswith(("sses", "xes", "ches", "shes")):
        return noun[:-2]
    return noun[:-1] if noun.endswith("s") else noun


@dataclass(frozen=True)
class NamedList:
    #: "the del statement", "the return statement", ...
    items: list[str]
    #: What they share: "in Python" (from "Python's ..." or "... in Python"), or "".
    scope: str
    #: The question asks how they differ.
    compared: bool


def kind_list(text: str) -> NamedList | None:
    """The list of named things of one kind in `text`, or None when it holds none."""
    found = _LIST.search(text)
    if not found:
        return None
    kind = singular(found["kind"].lower())
    names = [
        n.strip("`")
        for n in re.split(r"\s*,\s*(?:and\s+|or\s+)?|\s+and\s+|\s+or\s+", found["items"])
    ]
    names = list(dict.fromkeys(n for n in names if n))
    if len(names) < 2:
        return None
    scope = _SCOPE.search(found["rest"])
    shared = scope.group(1).strip() if scope else ""
    if not shared and found["owner"]:
        shared = f"in {found['owner']}"
    items = [f"the {name} {kind}" for name in names]
    return NamedList(items, shared, bool(_COMPARED.search(text)))
