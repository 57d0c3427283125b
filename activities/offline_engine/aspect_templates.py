"""The planner's aspect templates ("Limitations and pitfalls of X"), which top a plan up to the
depth's minimum, and the rule choosing the software ones or the general ones.

Apart from the planner's rules (planning.py) because they are its vocabulary, not its logic: a
new aspect is a row here, and a question about a planet must never get a step asking for its
"typical code or usage examples".
"""

from __future__ import annotations

import re

from activities.offline_engine.words import SOFTWARE_WORDS, _stem, _words

#: Aspect templates for a subject X, in the order they are added.
ENTITY_TEMPLATES = (
    (
        "definition",
        "Definition and purpose of {x}",
        "The definition of {x}: what problem is addressed, and where the documentation is.",
    ),
    (
        "how",
        "How {x} {works}",
        "The mechanism behind {x}: what happens step by step, and the key rules and terms.",
    ),
    (
        "usage",
        "Usage and examples of {x}",
        "Practical use of {x}: typical code or usage examples and common patterns.",
    ),
    (
        "limits",
        "Limitations and pitfalls of {x}",
        "Known limitations, common mistakes, edge cases and error conditions of {x}.",
    ),
    (
        "alternatives",
        "Alternatives to {x}",
        "Other options that solve the same problem as {x}, and how they compare.",
    ),
    (
        "history",
        "History and changes of {x}",
        "When {x} appeared and what changed across versions.",
    ),
    (
        "practices",
        "Best practices for {x}",
        "Recommended practices and guidelines for using {x} well.",
    ),
)
#: For "How do I ..." questions the subject is a task, not a thing.
TASK_TEMPLATES = (
    (
        "standard",
        "Standard way to {x}",
        "The documented, recommended way to {x}: which functions, types or commands to use.",
    ),
    (
        "usage",
        "Examples of how to {x}",
        "Worked examples that {x}, with the code or commands involved.",
    ),
    (
        "limits",
        "Pitfalls when trying to {x}",
        "Common mistakes, edge cases and errors when trying to {x}, and how to avoid them.",
    ),
    ("alternatives", "Other ways to {x}", "Alternative ways to {x} and when each is preferable."),
    (
        "history",
        "Changes affecting how to {x}",
        "Version changes and deprecations that affect how to {x}.",
    ),
)
#: The same aspects for a question about anything but software (planets, history, baking): no
#: code, documentation or versions.
GENERAL_TEMPLATES = (
    ("definition", "What {x} is", "What the sources say {x} is, and what it is known for."),
    ("facts", "Key facts about {x}", "The main facts and figures the sources give about {x}."),
    ("alternatives", "{X} compared with others", "How {x} compares with others of its kind."),
    ("history", "History of {x}", "How {x} was found or came about, and what changed over time."),
)
GENERAL_TASK_TEMPLATES = (
    ("usage", "Examples of how to {x}", "Worked examples of how to {x}, step by step."),
    (
        "limits",
        "Pitfalls when trying to {x}",
        "Common mistakes when trying to {x}, and how to avoid them.",
    ),
    ("alternatives", "Other ways to {x}", "Alternative ways to {x} and when each is preferable."),
)


def about_software(text: str) -> bool:
    """A question about software: a code name (`asyncio.gather`, `len()`, `--flag`) or a word of
    words.SOFTWARE_WORDS. Only such a question gets the software templates."""
    if re.search(r"`|\w\.\w|\w\(\)|(?<!\w)--?\w|::", text):
        return True
    return any(_stem(w) in SOFTWARE_WORDS or w.lower() in SOFTWARE_WORDS for w in _words(text))
