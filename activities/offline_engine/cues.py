"""What the routing rules (routing.py) look for: the words, phrases and patterns each ambiguity
rule matches, as data, so the rules read as their logic.
"""

from __future__ import annotations

import re

from workflows.kit.followup import ORDINALS  # one table of ordinals, with the follow-ups' pointers

# --- the cues ------------------------------------------------------------------------

PRONOUN_BASE = {"its": "it", "their": "they", "them": "they", "him": "he", "her": "she"}

#: Nouns whose referent is best identified by title, authors or link.
PUBLICATIONS = frozenset(
    """paper papers study studies article articles document documents doc docs book report post
    blog video talk survey tutorial course lecture slides website site page source sources""".split()
)
#: Nouns whose referent is best shown by pasting it.
PASTABLE = frozenset(
    """code snippet error errors bug bugs issue issues file script program config configuration data output
    log logs""".split()
)

SUPERLATIVES = (
    "best",
    "optimal",
    "ideal",
    "worst",
    "fastest",
    "slowest",
    "simplest",
    "easiest",
    "cheapest",
    "safest",
    "biggest",
    "smallest",
    "largest",
    "highest",
    "lowest",
    "strongest",
    "cleanest",
    "shortest",
    "longest",
)
#: "the most important", "the least risky": a superlative in two words.
MOST = re.compile(r"\b(most|least)\s+([a-z][a-z-]+)", re.I)
#: A superlative is scoped by a phrase that names what it is measured in: "best for text-to-SQL".
SCOPE_PHRASE = re.compile(
    r"\b(?:for|in|to|when|among|of|with|on|between|within|under)\s+(.+)$", re.I
)
#: "Which one is better?", "Which of them should I use?": a choice, with the options not named.
CHOICE = re.compile(r"\bwhich\s+(?:one|ones|of\s+(?:them|these|those|the\s+two))\b", re.I)
COMPARATIVES = ("better", "worse")
#: Evaluations that need a target: "enough" for what, "fast" compared to what.
SUFFICIENCY = ("enough", "sufficient", "adequate", "acceptable")
TARGETLESS = (*SUFFICIENCY, "good", "fast", "big", "large", "small", "slow")

ORDINAL_NOUNS = (
    r"(?:point|item|section|step|option|bullet|idea|one|part|answer|approach|example|paragraph|reason"
    r"|suggestion|entry|result|heading)s?"
)
ORDINAL_REF = re.compile(rf"\b(?:the\s+)?({'|'.join(ORDINALS)})\s+{ORDINAL_NOUNS}\b", re.I)
NUMBERED_REF = re.compile(
    r"\b(?:point|item|section|step|option|bullet|number|no\.)\s*#?(\d{1,2})\b", re.I
)
LIST_LINE = re.compile(r"^\s*(?:\d{1,2}[.)]|[-*•])\s+\S|^\s{0,3}#{1,6}\s+\S", re.M)

DEFINITE = re.compile(
    r"\b(the|that|this|these|those|my|our|your)\s+"
    r"(?:(?:same|other|previous|above|earlier|last|original|mentioned|aforementioned|two|three|both|new|latest)\s+)?"
    r"([a-z]+)\b"
)
QUALIFIER_PREPS = frozenset("of in on from by for called named about titled at with".split())
