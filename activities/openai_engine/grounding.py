"""The verifier's hand on what a model writes: text that the sources do not hold is not kept.

A strong model writes findings and reports from what it read; a small one (SmolLM2-135M behind
llama.cpp answers in valid JSON, constrained by the schema, with words of its own) writes fluent
text the sources do not say, or cites nothing. So the writing roles check the model's text with
the same lexical measure the workflow's verifier uses (`workflows/verification.lexical_verdict`):

- a step's observation needs at least one cited sentence that its cited passages hold; otherwise
  the engine writes it from those passages, extractively (the offline engine's method), keeping
  the model's choice of sources and its loop-back request;
- a report (or a section, or the summary) needs `MIN_GROUNDED` claims its cited evidence holds
  (or all of them when fewer were possible); otherwise the engine composes it from the evidence,
  extractively, every sentence quoted and cited, and says so in the report;
- a judge's verdict never sinks a claim that stands word for word in the evidence it cites.

So the model decides what it can decide well at its size (which sources a step rests on, whether
a step needs more, routing, plans, queries, reflection) and the sentences a reader gets are
either the model's own, verified, or the sources' own, quoted.
"""

from __future__ import annotations

import re
from typing import Any

from workflows import activity_models as m
from workflows.citations import CITATION, cited_ids
from workflows.models import Claim, Evidence, Verdict
from workflows.text import split_sentences
from workflows.verification import lexical_verdict

#: Supported claims a report must hold to be kept as the model wrote it.
MIN_GROUNDED = 3
#: What a composed report says about itself (the reader must know who wrote its sentences).
COMPOSED_NOTE = (
    "The model's draft of this text was not borne out by the sources, so its sentences are "
    "quoted from the evidence the research gathered."
)


def _evidence_of(ids: list[int], evidence: list[Evidence]) -> list[str]:
    return [e.text for e in evidence if e.source_id in ids]


def supported(text: str, ids: list[int], evidence: list[Evidence]) -> bool:
    """The lexical verdict on one cited claim: its words stand in one cited passage."""
    held = _evidence_of(ids, evidence)
    return bool(held) and lexical_verdict(CITATION.sub("", text), held).verdict is Verdict.SUPPORTED


def grounded_observation(observation: str, passages: list[m.Passage]) -> bool:
    """At least one sentence of the observation cites a passage that holds it."""
    pool = [Evidence(source_id=p.source_id, position=0, text=p.text) for p in passages]
    return any(
        supported(sentence, ids, pool)
        for sentence in split_sentences(observation)
        if (ids := cited_ids(sentence))
    )


def grounded_claims(claims: list[Claim], evidence: list[Evidence]) -> int:
    """How many of the claims their own cited evidence holds."""
    return sum(1 for c in claims if supported(c.text, c.source_ids, evidence))


def enough(claims: list[Claim], evidence: list[Evidence]) -> bool:
    """A written text is kept when `MIN_GROUNDED` of its claims hold (fewer when the evidence
    has fewer sources' worth of paragraphs to offer)."""
    wanted = min(MIN_GROUNDED, len(evidence))
    return grounded_claims(claims, evidence) >= max(1, wanted)


def verbatim(text: str, ids: list[int], evidence: list[Evidence]) -> bool:
    """The claim's words, in order, stand in a cited evidence paragraph (case and spacing aside)."""
    needle = _plain(CITATION.sub("", text))
    return len(needle) > 20 and any(needle in _plain(t) for t in _evidence_of(ids, evidence))


def _plain(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


def composed(written: Any, extractive: Any, note: str = COMPOSED_NOTE) -> Any:
    """The extractive text in place of the model's, saying so (usage stays the model's call)."""
    markdown = extractive.markdown.rstrip()
    return written.model_copy(
        update={"markdown": f"{markdown}\n\n_{note}_\n", "claims": extractive.claims}
    )
