"""Edges, in what the pages say: no next question made of a heading that is not a topic,
no "revised with your feedback" when the rewrite changed nothing, the plan review's round."""

from __future__ import annotations

from starter.web.pages.research import suggested_questions
from starter.web.presentation import review_texts
from tests.starter.web.conftest import WebServer, start, wait_for
from tests.starter.web.reports import _result
from workflows.kit.sections import revision_note
from workflows.models import DecidedBy, Review, ReviewDecision, ReviewTarget


def test_no_next_question_is_made_of_a_heading_that_is_not_a_topic() -> None:
    report = (
        "# Tides\n\n## Summary\n\nx\n\n## How the moon pulls\n\ny [1]\n\n"
        "## Not found in the sources\n\nz\n\n## Answer\n\nw\n"
    )
    assert suggested_questions(_result("Tides?", report, [], [], [])) == [
        "Tell me more about how the moon pulls"
    ]


def test_a_revision_that_changed_nothing_is_not_called_a_rewrite_with_your_feedback() -> None:
    reviews = [
        Review(target=ReviewTarget.REPORT, round=1, decision=ReviewDecision.REVISE, feedback="x"),
        Review(target=ReviewTarget.REPORT, round=2, decision=ReviewDecision.APPROVE),
    ]
    same = revision_note("# R\n\nText [1].\n", "# R\n\nText [1].\n", ["Say more"])
    said = review_texts.revised_notice(reviews, same) or ""
    assert "came out the same as the draft" in said and "with your feedback;" not in said
    changed = revision_note("# R\n\nMore text [1].\n", "# R\n\nText [1].\n", ["Say more"])
    assert "with your feedback" in (review_texts.revised_notice(reviews, changed) or "")
    timeout = [r.model_copy(update={"by": DecidedBy.TIMEOUT}) for r in reviews]
    assert review_texts.revised_notice(timeout, same) == said


async def test_the_plan_review_says_its_round_and_the_page_shows_the_events_so_far(
    open_web_server: WebServer,
) -> None:
    """Edges: the plan review had no "round 1 of 3"; without JavaScript the Progress
    card was empty (the events so far are rendered in the page now)."""
    async with open_web_server.client(None) as http:
        research_id = await start(http, review_plan=True)
        await wait_for(
            http, f"/api/research/{research_id}", lambda s: s.get("pending_review") == "plan"
        )
        page = (await http.get(f"/research/{research_id}")).text
        await http.post(f"/api/research/{research_id}/cancel", json={})
    assert "Review round 1 of 3" in page
    log = page.split('role="log"', 1)[1].split("</ol>", 1)[0]
    assert "plan 1:" in log and "<li" in log


def test_a_next_question_never_repeats_its_words_and_a_question_heading_stays_a_question() -> None:
    """ "Tell me more about tell me more about why is Venus hotter than Mercury"."""
    report = (
        "# Venus\n\n## Summary\n\nx\n\n## Tell me more about why is Venus hotter than Mercury\n\n"
        "y [1]\n\n## How long is a Martian year\n\nz [1]\n"
    )
    assert suggested_questions(_result("Venus?", report, [], [], [])) == [
        "Tell me more: Why is Venus hotter than Mercury?",
        "Tell me more: How long is a Martian year?",
    ]
