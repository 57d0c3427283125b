"""Claim verification's deterministic half (workflows/kit/verification.py): which sentences are claims,
how far word overlap can judge them, and how the report is edited by the verdicts."""

from __future__ import annotations

import ast
from pathlib import Path

from workflows.kit import verification
from workflows.kit.verification import (
    PARTIAL_MARK,
    cited_sentences,
    drop_unused_sources,
    lexical_verdict,
    mark_partial,
    remove_sentence,
    replace_sentence,
    summarize,
    verification_note,
)
from workflows.models import Claim, Verdict, VerificationSummary

OFFLINE_REPORT = """# How does Tokio schedule tasks?

> **Note:** The time budget ran out after step \\[2\\].

## Summary

Tokio runs tasks on a pool of worker threads [1]. Each worker keeps a local run queue of tasks [2]. Idle workers steal tasks from busy ones [1].

## How the scheduler works

- Tokio runs tasks on a pool of worker threads [1].
- Each worker keeps a local run queue of tasks [2].
- Idle workers steal tasks from busy ones [1].
- Version \\[7\\] of the runtime changed nothing here.

## Cooperative yielding \\[3\\]

- A task yields when it awaits a future that is not ready [3].
- Tasks get a budget of 128 operations before they must yield [2, 3].

## Sources

- [1] Tokio internals — https://example.org/tokio
- [2] Scheduler notes — https://example.org/scheduler
- [3] The async book — https://example.org/async

---

*Made offline by extractive methods: sentences quoted from the sources they cite.*
"""

LLM_REPORT = """# Rust ownership

Rust checks ownership rules at compile time [1]. Each value has exactly one owner [1, 3].

## Borrowing

References borrow a value without taking ownership [3]. The borrow checker rejects two mutable references to one value [2, 3]. The book has more, see \\[7\\] for details.

```rust
let s = String::from("hi"); // Not a claim [4].
```

> A quoted line is not the report's claim [5].

### Lifetimes

Lifetimes name how long a reference stays valid.[2] They are usually inferred [2].

## References

1. [1] The Rust Book - https://example.org/book
[2] Rustonomicon - https://example.org/nomicon
[3] Borrowing explained - https://example.org/borrow

### Further reading

Nothing here is a claim either [3].
"""

UNRELATED = [
    "Knead the dough for ten minutes, then let the bread rise overnight in a warm kitchen before baking."
]
OWNERSHIP = [
    "The Rust compiler enforces ownership and borrowing rules, which rules out data races in safe code."
]
SCHEDULER = [
    "Tokio's scheduler uses work stealing between worker threads.\n\n"
    + "Each worker owns a local queue with room for 256 tasks."
]


# --- lexical_verdict: the offline engine's whole method -------------------------------------------


def test_a_verbatim_quote_is_supported() -> None:
    check = lexical_verdict("Each worker owns a local queue with room for 256 tasks.", SCHEDULER)

    assert (check.verdict, check.coverage, check.missing_numbers) == (Verdict.SUPPORTED, 1.0, ())
    assert check.reason == "one cited passage holds every content word, number and name"


def test_a_half_overlapping_claim_is_partly_supported() -> None:
    check = lexical_verdict(
        "Each worker owns a local queue of tasks and a private memory arena.", SCHEDULER
    )

    assert check.verdict is Verdict.PARTIAL
    assert check.reason.startswith("the cited evidence holds 5 of 8 content words (62%)")


def test_a_claim_whose_number_differs_from_the_evidence_is_not_supported() -> None:
    evidence = ["Tokio was first released in 2015 as an asynchronous runtime for Rust."]
    check = lexical_verdict(
        "Tokio was first released in 2019 as an asynchronous runtime for Rust.", evidence
    )

    # every word is there, the year is not: a changed number is never supported
    assert check.verdict is Verdict.UNSUPPORTED
    assert check.missing_numbers == ("2019",)
    assert (
        check.reason == 'the cited evidence never says 2019 (the passage it restates says "2015")'
    )
    assert (
        lexical_verdict("Tokio was first released in 2015.", evidence).verdict is Verdict.SUPPORTED
    )


def test_a_claim_stitched_from_words_of_two_paragraphs_is_not_supported() -> None:
    claim = "Worker threads steal tasks from a local queue of 256 tasks."
    check = lexical_verdict(claim, SCHEDULER)

    assert check.coverage == 1.0  # all its words are in the evidence, but in no single passage
    assert check.verdict is Verdict.PARTIAL
    assert "spread over several passages" in check.reason


def test_inflections_numbers_and_unrelated_evidence() -> None:
    evidence = [
        "The runtime scheduled tasks on four threads, and 40 percent of them yielded early."
    ]
    assert (
        lexical_verdict(
            "Scheduling tasks on 4 thread has 40% of them yielding early.", evidence
        ).verdict
        is Verdict.SUPPORTED
    )
    assert (
        lexical_verdict("Ownership prevents data races.", UNRELATED).verdict is Verdict.UNSUPPORTED
    )
    assert lexical_verdict("Ownership prevents data races.", UNRELATED).reason.startswith(
        "the cited evidence holds only 0 of 4"
    )


# --- cited_sentences ------------------------------------------------------------------------------


def test_the_offline_reports_cited_sentences_once_each_without_notes_headings_or_sources() -> None:
    found = cited_sentences(OFFLINE_REPORT)

    assert [(s.claim, s.source_ids) for s in found] == [
        ("Tokio runs tasks on a pool of worker threads.", (1,)),
        ("Each worker keeps a local run queue of tasks.", (2,)),
        ("Idle workers steal tasks from busy ones.", (1,)),
        ("A task yields when it awaits a future that is not ready.", (3,)),
        ("Tasks get a budget of 128 operations before they must yield.", (2, 3)),
    ]
    assert found[-1].text == "Tasks get a budget of 128 operations before they must yield [2, 3]."
    assert all(s.text in OFFLINE_REPORT for s in found)


def test_an_llm_reports_cited_sentences_skip_code_quotes_escapes_and_the_references_list() -> None:
    found = cited_sentences(LLM_REPORT)

    assert [(s.text, s.source_ids) for s in found] == [
        ("Rust checks ownership rules at compile time [1].", (1,)),
        ("Each value has exactly one owner [1, 3].", (1, 3)),
        ("References borrow a value without taking ownership [3].", (3,)),
        ("The borrow checker rejects two mutable references to one value [2, 3].", (2, 3)),
        ("Lifetimes name how long a reference stays valid.[2]", (2,)),
        ("They are usually inferred [2].", (2,)),
    ]
    assert found[4].claim == "Lifetimes name how long a reference stays valid."
    assert all(s.text in LLM_REPORT for s in found)


def test_the_sources_list_ends_at_the_next_heading_of_its_level_and_lists_are_unmarked() -> None:
    markdown = (
        "## Sources\n\n[1] A - https://a\n\n### Notes\n\nStill sources [1].\n\n"
        "## Appendix\n\n1. Caching  halves   latency [1][2]. duplicates ok [2].\n* caching halves latency [2].\n"
    )
    found = cited_sentences(markdown)

    assert [(s.text, s.claim, s.source_ids) for s in found] == [
        (
            "Caching  halves   latency [1][2]. duplicates ok [2].",
            "Caching halves latency. duplicates ok.",
            (1, 2),
        ),
        ("caching halves latency [2].", "caching halves latency.", (2,)),
    ]
    # a lowercase start is not a new sentence (split_sentences's rule); the same claim counts once
    assert [
        s.claim for s in cited_sentences("A is B [1]. A is B [2].\n\n**Sources:**\n[1] x\n")
    ] == ["A is B."]


# --- editing the report ---------------------------------------------------------------------------


def test_removing_a_finding_drops_its_bullet_line_and_its_summary_sentence() -> None:
    sentence = "Each worker keeps a local run queue of tasks [2]."
    edited = remove_sentence(OFFLINE_REPORT, sentence)

    assert edited == OFFLINE_REPORT.replace(
        "Tokio runs tasks on a pool of worker threads [1]. Each worker keeps a local run queue of tasks [2]. ",
        "Tokio runs tasks on a pool of worker threads [1]. ",
    ).replace("- Each worker keeps a local run queue of tasks [2].\n", "")


def test_removing_a_sentence_mid_paragraph_or_at_its_ends_leaves_clean_prose() -> None:
    middle = remove_sentence(
        LLM_REPORT, "The borrow checker rejects two mutable references to one value [2, 3]."
    )
    assert middle == LLM_REPORT.replace(
        " The borrow checker rejects two mutable references to one value [2, 3].", ""
    )
    last = remove_sentence(LLM_REPORT, "Each value has exactly one owner [1, 3].")
    assert last == LLM_REPORT.replace(" Each value has exactly one owner [1, 3].", "")
    first = remove_sentence(LLM_REPORT, "Lifetimes name how long a reference stays valid.[2]")
    assert first == LLM_REPORT.replace("Lifetimes name how long a reference stays valid.[2] ", "")


def test_removing_a_sections_only_paragraph_keeps_its_heading_and_one_blank_line() -> None:
    markdown = "# T\n\nIntro [1].\n\n## A\n\nOnly claim [2].\n\n## B\n\nOther [3].\n"

    assert (
        remove_sentence(markdown, "Only claim [2].")
        == "# T\n\nIntro [1].\n\n## A\n\n## B\n\nOther [3].\n"
    )
    # a sentence is matched whole, never inside a longer one, and never in the sources list
    assert remove_sentence("Big A is B [1]. A is B [1].\n", "A is B [1].") == "Big A is B [1].\n"
    assert (
        remove_sentence("## Sources\n\nA is B [1].\n", "A is B [1].")
        == "## Sources\n\nA is B [1].\n"
    )


def test_marking_a_partly_supported_sentence_changes_nothing_else() -> None:
    sentence = "Tasks get a budget of 128 operations before they must yield [2, 3]."
    marked = mark_partial(OFFLINE_REPORT, sentence)

    assert marked == OFFLINE_REPORT.replace(
        sentence,
        f"Tasks get a budget of 128 operations before they must yield [2, 3]{PARTIAL_MARK}.",
    )
    assert mark_partial(marked, sentence) == marked
    again = [s for s in cited_sentences(marked) if s.source_ids == (2, 3)]
    assert again[0].claim == "Tasks get a budget of 128 operations before they must yield."

    trailing = "Lifetimes name how long a reference stays valid.[2]"
    marked = mark_partial(LLM_REPORT, trailing)
    assert marked == LLM_REPORT.replace(trailing, trailing + PARTIAL_MARK)
    assert mark_partial(marked, trailing) == marked
    assert [s.claim for s in cited_sentences(marked)] == [
        s.claim for s in cited_sentences(LLM_REPORT)
    ]


def test_replacing_a_sentence_rewrites_every_occurrence_and_nothing_else() -> None:
    old, new = (
        "Idle workers steal tasks from busy ones [1].",
        "Idle workers take tasks from busy workers' queues [1].",
    )

    assert replace_sentence(OFFLINE_REPORT, old, new) == OFFLINE_REPORT.replace(old, new)
    assert replace_sentence(OFFLINE_REPORT, old, "  ") == remove_sentence(OFFLINE_REPORT, old)
    # the workflow later removes or marks a rewrite by the text the reviser returned, unnormalized
    rewrite = "Idle workers  take tasks\nfrom busy workers [1]."
    rewritten = replace_sentence(OFFLINE_REPORT, old, rewrite)
    assert rewritten == OFFLINE_REPORT.replace(
        old, "Idle workers take tasks from busy workers [1]."
    )
    assert remove_sentence(rewritten, rewrite) == remove_sentence(OFFLINE_REPORT, old)
    assert mark_partial(rewritten, rewrite).count(f"busy workers [1]{PARTIAL_MARK}.") == 2


def test_the_sources_list_keeps_only_sources_still_cited() -> None:
    assert drop_unused_sources(OFFLINE_REPORT, {1, 3}) == OFFLINE_REPORT.replace(
        "- [2] Scheduler notes — https://example.org/scheduler\n", ""
    )
    assert drop_unused_sources(LLM_REPORT, [2]) == LLM_REPORT.replace(
        "1. [1] The Rust Book - https://example.org/book\n", ""
    ).replace("[3] Borrowing explained - https://example.org/borrow\n", "")
    emptied = drop_unused_sources(OFFLINE_REPORT, set())
    assert "## Sources\n\n---\n" in emptied and emptied.endswith("cite.*\n")


# --- the summary ----------------------------------------------------------------------------------


def test_the_summary_counts_final_verdicts() -> None:
    claims = [
        *(Claim(text=f"s{i}", source_ids=[1], verdict=Verdict.SUPPORTED) for i in range(3)),
        Claim(text="p", source_ids=[1], verdict=Verdict.PARTIAL),
        Claim(text="r", source_ids=[1], verdict=Verdict.SUPPORTED, original="first try"),
        Claim(text="u", source_ids=[2], verdict=Verdict.UNSUPPORTED, original="was", removed=True),
        Claim(text="v", source_ids=[2]),
    ]
    summary = summarize(claims, method="lexical+judge")

    assert summary == VerificationSummary(
        enabled=True,
        method="lexical+judge",
        claims=7,
        supported=4,
        partial=1,
        unsupported=1,
        unverified=1,
        revised=2,
        removed=1,
        share_supported=0.5714,
    )
    assert summarize([], method="lexical").share_supported == 0.0


def test_the_verification_note_says_what_the_reader_can_trust() -> None:
    summary = VerificationSummary(
        method="lexical+judge", claims=14, supported=12, partial=1, unsupported=1, removed=1
    )
    assert verification_note(summary) == (
        '*Verification: 12 of 14 claims are supported by their cited sources; 1 partly (marked "partly supported"); '
        "1 removed as unsupported.*"
    )
    assert verification_note(VerificationSummary(method="lexical", claims=1, supported=1)) == (
        "*Verification: 1 of 1 claim is supported by its cited sources.*"
    )
    assert (
        verification_note(summarize([], method="lexical"))
        == "*Verification: the report makes no cited claims.*"
    )
    assert verification_note(summarize([], method="lexical", enabled=False)) == (
        "*Claims were not verified (verification was turned off).*"
    )


def test_the_module_stays_importable_in_the_workflow_sandbox() -> None:
    tree = ast.parse(Path(verification.__file__).read_text())
    imported = {
        n.module if isinstance(n, ast.ImportFrom) else a.name
        for n in ast.walk(tree)
        if isinstance(n, ast.Import | ast.ImportFrom)
        for a in (n.names if isinstance(n, ast.Import) else [n])
    }
    assert imported <= {
        "__future__",
        "re",
        "collections.abc",
        "dataclasses",
        "workflows.text",
        "workflows.kit.citations",  # the one citation pattern; pure (re and workflows.models)
        "workflows.models",
    }


def test_the_offline_engines_own_claims_are_the_reports_cited_sentences() -> None:
    from activities.offline_engine.reporting import write_report
    from workflows.activity_models import SynthesizeInput
    from workflows.models import (
        Plan,
        PlanStep,
        Source,
        StepStatus,
    )

    steps = [
        PlanStep(
            title="Kilns",
            status=StepStatus.COMPLETED,
            source_ids=[1, 2],
            observation=(
                "Wood-fired kilns reach 1300 degrees after a day of stoking [1]. Ash settles on the pots "
                "and melts into a glaze [2]."
            ),
        ),
        PlanStep(
            title="Glazes [4]",
            status=StepStatus.COMPLETED,
            source_ids=[2],
            observation=(
                "Ash settles on the pots and melts into a glaze [2]. Celadon glazes owe their green to iron [2]."
            ),
        ),
    ]
    sources = [
        Source(id=1, url="https://example.org/kiln", title="Kiln notes"),
        Source(id=2, url="https://example.org/ash", title="Ash glazes [draft]"),
    ]
    report = write_report(
        SynthesizeInput(
            query="How do wood-fired kilns glaze pots?",
            plan=Plan(title="Kilns", steps=steps),
            sources=sources,
        )
    )
    found = cited_sentences(report.markdown)

    assert {s.claim for s in found} == {c.text for c in report.claims}
    assert all(s.text in report.markdown for s in found)


def test_the_workflows_edits_compose_on_one_report() -> None:
    """The order workflows/research.py applies them: remove the unsupported, mark the partial,
    then drop sources no sentence cites any more."""
    evidence = {
        1: ["Rust checks ownership rules at compile time."],
        2: UNRELATED,
        3: [
            "Each value in Rust has exactly one owner.\n\nThe borrow checker rejects mutable references.",
            "References borrow a value without taking ownership.",
        ],
    }
    report = LLM_REPORT
    for sentence in cited_sentences(LLM_REPORT):
        check = lexical_verdict(
            sentence.claim, [t for n in sentence.source_ids for t in evidence[n]]
        )
        if check.verdict is Verdict.UNSUPPORTED:
            report = remove_sentence(report, sentence.text)
        elif check.verdict is Verdict.PARTIAL:
            report = mark_partial(report, sentence.text)
    still = {n for s in cited_sentences(report) for n in s.source_ids}
    report = drop_unused_sources(report, still)

    assert report.startswith(
        "# Rust ownership\n\nRust checks ownership rules at compile time [1]. "
        "Each value has exactly one owner [1, 3].\n\n## Borrowing\n\n"
        "References borrow a value without taking ownership [3]. The borrow checker rejects "
        f"two mutable references to one value [2, 3]{PARTIAL_MARK}. The book has more"
    )
    assert "### Lifetimes\n\n## References\n\n1. [1] The Rust Book" in report
    assert still == {1, 2, 3} and "Rustonomicon" in report
