"""Questions about Python's documentation and the documents that answer them, for tests of research
over a person's documents: the claim-attribution dev set (../shared/attribution/dev.jsonl, when it
is beside the clone) and a held-out set written here, of the same kinds (several functions of a
module, several statements, a comparison), whose documents are the running interpreter's own
docstrings and language-reference topics, so any clone has them. Retrieval is tuned on neither's
sentences: the held-out set shows whether what helps the dev set helps questions it never saw.
"""

from __future__ import annotations

import inspect
import json
import re
from dataclasses import dataclass
from importlib import import_module
from pathlib import Path

DEV_SET = Path(__file__).resolve().parents[2] / ".." / "shared" / "attribution" / "dev.jsonl"


@dataclass(frozen=True)
class Source:
    title: str
    text: str


@dataclass(frozen=True)
class Question:
    id: str
    question: str
    sources: list[Source]


def dev_questions() -> list[Question]:
    """The dev set's 12 questions with their 2-3 sources each."""
    sets = [json.loads(line) for line in DEV_SET.read_text(encoding="utf-8").splitlines() if line]
    return [
        Question(s["id"], s["question"], [Source(x["title"], x["text"]) for x in s["sources"]])
        for s in sets
    ]


#: id, question, and the documents that answer it: "topic:NAME" is a language-reference topic,
#: anything else a dotted name whose docstring is the document.
HELD_OUT = (
    ("loops", "What do Python's for, while and with statements do?", "topic:for topic:while topic:with"),
    ("bisect", "How do bisect.insort and bisect.bisect_left keep a list sorted?", "bisect.insort bisect.bisect_left"),
    ("shutil", "What do shutil.copytree() and shutil.rmtree() do, and how are errors handled?", "shutil.copytree shutil.rmtree"),
    ("counter", "How does collections.Counter count elements, and what does most_common() return?", "collections.Counter collections.Counter.most_common"),
    ("exceptions", "What do the try, raise and assert statements do in Python?", "topic:try topic:raise topic:assert"),
    ("scopes", "How do Python's global and nonlocal statements differ?", "topic:global topic:nonlocal"),
    ("operator", "What do operator.itemgetter and operator.attrgetter return?", "operator.itemgetter operator.attrgetter"),
    ("paths", "How do os.path.join and os.path.splitext treat the parts of a path?", "os.path.join os.path.splitext"),
)  # fmt: skip


def held_out_questions() -> list[Question]:
    return [
        Question(id_, question, [_document(name) for name in names.split()])
        for id_, question, names in HELD_OUT
    ]


def _document(name: str) -> Source:
    """A topic titled by its own first line ('The "for" statement'), a docstring by its name."""
    if name.startswith("topic:"):
        from pydoc_data.topics import topics

        title, _, text = topics[name.removeprefix("topic:")].partition("\n")
        return Source(title.strip(), text.lstrip("*\n"))
    module, _, attribute = name.partition(".")
    found = import_module(module)
    for part in attribute.split("."):
        found = getattr(found, part)
    return Source(name, inspect.getdoc(found) or "")


def file_name(title: str) -> str:
    """A file name a person might give the document: its title, without what paths refuse."""
    return re.sub(r"[^\w.() -]+", "", title).strip() + ".md"
