"""Two scripted judges that speak the OpenAI protocol (through tests/support/llm_server.py), for
measuring the verifier with a model: a careful one and an uncritical one.

The careful judge knows the right verdict of the sentences it is told about (a labelled claim, a
report's sentence known faithful or flawed) and, for anything else, calls supported only what the
evidence it was sent says word for word: so it passes the canaries (a quote; a quote with a number,
a name or a negation changed) as a careful model would. The uncritical judge calls everything
supported: it must fail its canaries and never decide a verdict.
"""

from __future__ import annotations

import re
from typing import Any

_CLAIM_LINE = re.compile(r"^(\d+)\. (.*) \(cites ([^()]*)\)$", re.M)


def plain(text: str) -> str:
    """A sentence as compared: lower case, punctuation and spacing folded."""
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


def claims_of(prompt: str) -> list[tuple[int, str, tuple[int, ...]]]:
    """The (index, claim, cited ids) lines of a verify_claims prompt."""
    return [
        (int(i), text, tuple(sorted(int(n) for n in re.findall(r"\d+", cites))))
        for i, text, cites in _CLAIM_LINE.findall(prompt)
    ]


def key(text: str, cites: list[int] | tuple[int, ...]) -> str:
    """A claim as a careful judge recognises it: its words and what it cites (the same sentence
    citing another source is another claim)."""
    return f"{plain(text)} {sorted(cites)}"


def evidence_of(prompt: str) -> str:
    """The prompt's evidence section (everything after its "Evidence:" heading)."""
    at = prompt.rfind("\nEvidence:")
    return prompt[at:] if at >= 0 else prompt


def careful(known: dict[str, str]) -> Any:
    """A verify_claims reply function: `known` maps `key(claim, cites)` to its verdict."""

    def reply(prompt: str) -> dict[str, Any]:
        evidence = plain(evidence_of(prompt))
        verdicts = []
        for index, text, cites in claims_of(prompt):
            verdict = known.get(key(text, cites)) or (
                "supported" if plain(text) in evidence else "unsupported"
            )
            verdicts.append({"index": index, "verdict": verdict, "reason": f"read: {verdict}"})
        return {"verdicts": verdicts}

    return reply


def uncritical(prompt: str) -> dict[str, Any]:
    """Every claim supported, whatever it says."""
    return {
        "verdicts": [
            {"index": i, "verdict": "supported", "reason": "Looks right."}
            for i, _, _ in claims_of(prompt)
        ]
    }
