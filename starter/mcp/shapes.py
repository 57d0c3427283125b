"""What the MCP tools answer with: a research's status as a client needs it to decide its next
call (`status_shape`), and a finished research's report with its sources (`report_shape`). One
module, so `research`, `research_status`, the answers and `get_report` say the same."""

from __future__ import annotations

from typing import Any

from starter.client.terminal import clean
from workflows.models import ResearchResult, ResearchStatus


def status_shape(workflow_id: str, status: ResearchStatus) -> dict[str, Any]:
    """The stage, and what the research waits for (with the tool that answers it)."""
    answer: dict[str, Any] = {
        "id": workflow_id,
        "status": status.stage.value,
        "question": status.query,
        "sources": status.sources_count,
        "last_event_seq": status.last_event_seq,
    }
    if status.plan is not None:
        answer["plan"] = {
            "title": status.plan.title,
            "iteration": status.plan_iterations,
            "steps": [
                {"title": s.title, "description": s.description, "status": s.status.value}
                for s in status.plan.steps
            ],
        }
    if status.pending_question:
        answer.update(
            status="awaiting_answer",
            clarification_question=status.pending_question,
            next=f"ask the user, then answer_clarification(id={workflow_id!r}, answer=...)",
        )
    elif status.pending_review:
        answer.update(
            status="awaiting_review",
            review=status.pending_review.value,
            next=f"review(id={workflow_id!r}, decision='approve'|'revise'|'cancel', feedback=...)",
        )
        if status.critique is not None:
            answer["critique"] = status.critique.model_dump(mode="json")
        if status.draft_report_markdown:  # what the user is asked to approve: show it to them
            answer["draft_report_markdown"] = clean(status.draft_report_markdown)
    return answer


def report_shape(workflow_id: str, result: ResearchResult) -> dict[str, Any]:
    """The report, its sources (a paper's metadata too, empty fields left out), the verification
    and the notes, with the resource that keeps it."""
    return {
        "id": workflow_id,
        "status": result.outcome.value,
        "question": result.query,
        "report_markdown": clean(result.report_markdown),
        "sources": [
            s.model_dump(mode="json", exclude={"provider", "digest"}) for s in result.sources
        ],
        "verification": result.verification.model_dump(mode="json")
        if result.verification
        else None,
        "notes": result.notes,
        "resource": f"research://{workflow_id}/report",
    }
