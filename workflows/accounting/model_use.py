"""The truth about the model: a research its model never answered never passes for one it did.

Each LLM role call either gets a usable answer or, once its retries are spent, takes its role's
fallback (workflows/accounting/calls.py). The workflow counts both (`Stats.llm_answered`,
`Stats.llm_unanswered_by_role`). A research whose model has answered nothing when a call's retries
run out because the endpoint failed (an outage, every call an HTTP 500, a refused request, replies
that never parse) fails at once, in one line that names the endpoint and quotes the server: a
report written by fallbacks alone would pass for the model's. One where some roles fell back says
so at the top of its report and in its notes ("The model answered 7 of 10 calls; planning and the
critique fell back to the engine's rules.").
"""

from __future__ import annotations

from temporalio.exceptions import ApplicationError

from workflows.spending import Stats

#: Failures that mean the model gave no usable answer: the endpoint's errors (errors.py) and
#: replies that never parsed. A reply cut off, filtered or refused was an answer (its own note).
NO_ANSWER = frozenset(
    {
        "LLMUnavailable",
        "LLMTimeout",
        "LLMError",
        "LLMBadRequest",
        "LLMRateLimited",
        "InvalidLLMReply",
    }
)

#: What a role does, as a reader says it (`partial_line`).
DOING = {
    "route": "routing",
    "clarify": "the clarifying question",
    "coordinate": "classifying the question",
    "write_queries": "the search queries",
    "plan": "planning",
    "observe": "the step findings",
    "reflect": "reflection",
    "synthesize": "the report",
    "outline_report": "the report's outline",
    "write_section": "report sections",
    "summarize_report": "the summary",
    "verify_claims": "claim checking",
    "revise_claims": "claim rewrites",
    "critique": "the critique",
}


def answered(stats: Stats) -> None:
    stats.llm_answered += 1


def unanswered(stats: Stats, role: str, error_type: str | None) -> bool:
    """Count a role call the model left unanswered; True when it was for lack of any answer."""
    stats.llm_unanswered_by_role[role] = stats.llm_unanswered_by_role.get(role, 0) + 1
    return error_type in NO_ANSWER


def never_answered(stats: Stats) -> bool:
    return stats.llm_answered == 0 and sum(stats.llm_unanswered_by_role.values()) > 0


def failure(message: str) -> ApplicationError:
    """The research's one-line failure: the endpoint and what it said are in `message`."""
    return ApplicationError(
        f"the model answered none of the research's calls: {message}",
        type="LLMNeverAnswered",
        non_retryable=True,
    )


def partial_line(stats: Stats) -> str | None:
    """'The model answered 7 of 10 calls; planning and the critique fell back ...', or None."""
    missed = stats.llm_unanswered_by_role
    if not missed or stats.llm_answered == 0:
        return None
    total = stats.llm_answered + sum(missed.values())
    roles = [DOING.get(r, r.replace("_", " ")) for r in missed]
    what = roles[0] if len(roles) == 1 else f"{', '.join(roles[:-1])} and {roles[-1]}"
    return (
        f"The model answered {stats.llm_answered} of {total} calls; {what} fell back to the "
        "engine's rules (the notes say why)."
    )


def settled(stats: Stats, notes: list[str], report: str) -> str:
    """The finished report, as the model's share of it allows: a research its model never
    answered fails here (the calls that failed only with cut-off or refused replies never ended
    it early); one where some roles fell back says so at the top and in `notes`."""
    if never_answered(stats):
        roles = ", ".join(stats.llm_unanswered_by_role)
        raise failure(f"every call failed or went unanswered ({roles}); see the notes")
    line = partial_line(stats)
    if line is None:
        return report
    notes.append(line)
    return f"_{line}_\n\n{report}"
