"""The evidence pool kept after each step (workflows/kit/evidence.py)."""

from __future__ import annotations

from workflows.kit.evidence import EVIDENCE_CHARS, merge, supporting_evidence
from workflows.models import Passage

AQUEDUCTS = Passage(
    source_id=1,
    title="Aqueducts",
    url="https://example.org/a",
    text=(
        "Rome had eleven aqueducts by the third century.\n\n"
        "Settling tanks let sand fall out of the flow before the water reached the city.\n\n"
        "The arcades on postcards were the exception; most channels ran underground."
    ),
)
TIDES = Passage(
    source_id=2,
    title="Tide pools",
    url="https://example.org/t",
    text=("Rock pools are small enough to survey in an afternoon.\n\nStorms reset them."),
)


def test_the_paragraphs_that_share_the_observations_words_are_kept_with_their_position() -> None:
    pool = supporting_evidence(
        "Settling tanks removed sand from the water [1].", [1], [AQUEDUCTS, TIDES]
    )

    assert pool[0].source_id == 1 and pool[0].position == 1
    assert pool[0].text.startswith("Settling tanks")
    assert all(e.source_id == 1 for e in pool)  # source 2 was read but not cited


def test_a_cited_source_without_shared_words_keeps_its_first_paragraph() -> None:
    pool = supporting_evidence("Completely unrelated wording [2].", [2], [TIDES])

    assert [(e.source_id, e.position) for e in pool] == [(2, 0)]


def test_evidence_is_trimmed_and_merged_without_repeats() -> None:
    long = Passage(source_id=3, title="Long", url="u", text="aqueduct " * 400)
    first = supporting_evidence("aqueduct", [3], [long])
    pool = merge(first, supporting_evidence("aqueduct", [3], [long]))

    assert len(pool) == 1 and len(pool[0].text) <= EVIDENCE_CHARS


def test_each_cited_sentence_keeps_the_paragraph_it_came_from() -> None:
    """Three findings from three paragraphs of one source: all three paragraphs are kept, so a
    verifier can check every sentence, not only the two closest to the observation as a whole."""
    observation = (
        "Rome had eleven aqueducts by the third century [1]. "
        "Settling tanks let sand fall out of the flow [1]. "
        "Most channels ran underground [1]."
    )
    pool = supporting_evidence(observation, [1], [AQUEDUCTS])

    assert [e.position for e in pool] == [0, 1, 2]


def test_a_long_paragraph_is_cut_around_the_finding_not_at_its_start() -> None:
    filler = " ".join(f"Filler sentence number {i} says nothing." for i in range(40))
    passage = Passage(
        source_id=4,
        title="Long",
        url="u",
        text=f"{filler} The gauge of the channel was one foot. {filler}",
    )
    pool = supporting_evidence("The channel gauge was one foot [4].", [4], [passage])

    assert len(pool) == 1 and len(pool[0].text) <= EVIDENCE_CHARS
    assert "The gauge of the channel was one foot." in pool[0].text
