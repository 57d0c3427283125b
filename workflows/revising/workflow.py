"""`ReviseSectionWorkflow`: one section of a finished report rewritten with a person's feedback,
its claims checked again, and the new version kept in the library beside the earlier ones.

Why a workflow of its own, not a signal to the research: the research has ended (and Temporal may
have forgotten it); what it found is in the library, and the client hands the stored version to
this workflow. The section is written by the research's own `write_section` role (so the offline
engine and a real model both revise), from the research's stored evidence only: no new search,
so a revision takes seconds and cites nothing the research did not read. It cites only sources
the report already lists, so the Sources list, and every byte outside the section, stay as they
were (workflows/kit/sections.py). The rewritten sentences are checked with the verifier the
research uses (workflows/checks/checking.py): unsupported ones are rewritten once, then removed.
`save_revision` stores the new version, refusing it if another revision was stored meanwhile.

Deterministic: activities do all I/O; the rest is text work on what the input holds.
"""

from __future__ import annotations

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError

from workflows import roles
from workflows.accounting.calls import call
from workflows.accounting.state import ResearchState
from workflows.checks.checking import _verify as verify_claims
from workflows.kit import citations, verification
from workflows.kit import sections as numbered
from workflows.models import (
    Claim,
    PlanStep,
    ResearchRequest,
    ResearchResult,
    Source,
    StepStatus,
    VerificationSummary,
)
from workflows.report_models import ReportSection, SectionInput
from workflows.revising_messages import (
    FEEDBACK_MAX_CHARS,
    ReviseSectionInput,
    RevisionOutcome,
    SaveRevisionInput,
    SaveRevisionOutput,
)
from workflows.text import content_terms

#: Feedback that asks for less, or for more, of what the section says: the length asked for.
_SHORTER = ("short", "brief", "concise", "condense", "trim", "tighten", "fewer", "less")
_LONGER = ("more", "longer", "expand", "detail", "elaborate", "deeper", "add", "include")
#: At most this many paragraphs of the research's other evidence join a section for its feedback.
EXTRA_EVIDENCE = 12


def refused(message: str) -> ApplicationError:
    """A revision that cannot be made as asked, in one line (the client shows it as it is)."""
    return ApplicationError(message, type="RevisionRefused", non_retryable=True)


def failed(message: str) -> ApplicationError:
    """A revision that could not be done just now (a writer or the library unavailable)."""
    return ApplicationError(message, type="RevisionFailed", non_retryable=True)


@workflow.defn(name="ReviseSectionWorkflow")
class ReviseSectionWorkflow:
    @workflow.run
    async def run(self, inp: ReviseSectionInput) -> RevisionOutcome:
        result = inp.result
        report = result.report_markdown
        found = numbered.sections(report)
        if not 1 <= inp.section <= len(found):
            raise refused(f"the report has no section {inp.section} (it has {len(found)})")
        feedback = " ".join(inp.feedback.split())
        if not feedback or len(feedback) > FEEDBACK_MAX_CHARS:
            raise refused(f"the feedback must be 1 to {FEEDBACK_MAX_CHARS} characters")
        section = found[inp.section - 1]
        state = _state_of(result, inp.owner)
        listed = _listed_sources(report, result.sources)
        written = await call(
            state,
            roles.WRITE_SECTION,
            _section_input(state, report, found, section, feedback, listed),
        )
        if written is None or not written.markdown.strip():
            raise failed("the section could not be rewritten: the writer was unavailable")
        body, _ = citations.drop_unresolved(written.markdown.strip(), listed)
        checked, claims = await verify_claims(state, body)
        summary = state.writeup.verification or verification.summarize(claims, method="lexical")
        body = _without_note(checked, summary)
        version = inp.base_version + 1
        new_report = numbered.replaced(
            report, section, body, numbered.marker_line(version, summary)
        )
        all_claims = _merged_claims(result.claims, section.body(report), claims)
        saved = await _save(
            SaveRevisionInput(
                research_id=inp.research_id,
                run_id=inp.run_id,
                owner=inp.owner,
                base_version=inp.base_version,
                section=inp.section,
                heading=section.heading,
                feedback=feedback,
                report_markdown=new_report,
                claims=all_claims,
                verification=_recounted(result.verification, all_claims),
                section_verification=summary,
                engine=state.writeup.engine,
                revised_by=f"{workflow.info().workflow_id}/{workflow.info().run_id}",
                created_at=workflow.now(),
            ),
        )
        revised = numbered.sections(new_report)[inp.section - 1]
        return RevisionOutcome(
            research_id=inp.research_id,
            version=saved.version,
            section=inp.section,
            heading=section.heading,
            feedback=feedback,
            section_markdown=new_report[revised.body_start : revised.end].strip(),
            verification=summary,
            report_markdown=new_report,
        )


async def _save(record: SaveRevisionInput) -> SaveRevisionOutput:
    """The new version, stored; a refusal (the report changed meanwhile) in its own words."""
    try:
        return await roles.SAVE_REVISION.run(record)
    except ActivityError as err:
        cause = err.cause
        if isinstance(cause, ApplicationError) and cause.non_retryable:
            raise ApplicationError(cause.message, type=cause.type, non_retryable=True) from None
        raise failed("the revised section could not be stored in the research library") from None


def _state_of(result: ResearchResult, owner: str) -> ResearchState:
    """What the research's roles and verifier read, rebuilt from its stored result."""
    state = ResearchState()
    state.request = ResearchRequest(
        query=result.query, depth=result.depth, mode=result.mode, owner=owner
    )
    state.language = result.language
    state.inquiry.depth = result.depth
    state.inquiry.plan = result.plan
    state.conversation.clarifications = list(result.clarifications)
    state.material.sources = list(result.sources)
    state.material.evidence = list(result.evidence)
    state.writeup.engine = result.engine
    return state


def _listed_sources(report: str, sources: list[Source]) -> list[Source]:
    """The sources the report names (cited in its prose or on its Sources list): all a revised
    section may cite, so the list stays as it is."""
    named = set(citations.cited_ids(report))
    return [s for s in sources if s.id in named]


def _section_input(
    state: ResearchState,
    report: str,
    found: list[numbered.Section],
    section: numbered.Section,
    feedback: str,
    listed: list[Source],
) -> SectionInput:
    """What the writer of the section sees: the steps the section was written from, their
    evidence (and what else the research read that the feedback names), the other sections'
    headings, what the sections before it say, the feedback, and the section as it stands."""
    current = section.body(report)
    plan = state.inquiry.plan
    steps = plan.steps if plan else []
    chosen = _steps_of(section.heading, current, steps)
    allowed = {s.id for s in listed}
    cited = (
        {n for i in chosen for n in steps[i].source_ids}
        | {n for i in chosen for n in citations.cited_ids(steps[i].observation or "")}
        | set(citations.cited_ids(current))
    ) & allowed
    evidence = [e for e in state.material.evidence if e.source_id in cited]
    terms = set(content_terms(feedback))
    extra = [
        e
        for e in state.material.evidence
        if e.source_id in allowed
        and e.source_id not in cited
        and terms & set(content_terms(e.text))
    ][:EXTRA_EVIDENCE]
    evidence += extra
    cited |= {e.source_id for e in extra}
    summary = section.heading.strip().casefold() == "summary"
    before = [s for s in found if s.number < section.number]
    words = max(60, len(current.split()))
    wanted = set(feedback.casefold().split())
    if any(w.startswith(_SHORTER) for w in wanted):
        words = max(40, words // 2)
    elif any(w.startswith(_LONGER) for w in wanted):
        words = words * 3 // 2
    return SectionInput(
        **state.about(),
        title=_title(report, state.question),
        section=ReportSection(heading=section.heading, brief=feedback, step_indexes=chosen),
        steps=[steps[i] for i in chosen],
        evidence=evidence,
        read=state.material.read_evidence(sorted(cited)),
        sources=[s for s in listed if s.id in cited],
        other_headings=[s.heading for s in found if s.number != section.number],
        told_before=[]
        if summary
        else [s.body(report) for s in before if s.heading.strip().casefold() != "summary"],
        feedback=[
            feedback,
            "The section as it stands (rewrite it for the feedback above; keep what the "
            f"feedback does not ask to change):\n{current}",
        ],
        target_words=words,
        current=current or "(empty)",
    )


def _steps_of(heading: str, body: str, steps: list[PlanStep]) -> list[int]:
    """The plan's completed steps a section draws on: the Summary all of them; else the step the
    section is named after, else the steps whose sources it cites, else all of them."""
    done = [i for i, s in enumerate(steps) if s.status is StepStatus.COMPLETED and s.observation]
    name = " ".join(heading.split()).casefold()
    if name == "summary":
        return done
    named = [
        i
        for i in done
        if name
        in (
            " ".join(steps[i].title.split()).casefold(),
            " ".join(citations.escape(steps[i].title).split()).casefold(),
        )
    ]
    if named:
        return named
    cited = set(citations.cited_ids(body))
    drawn = [
        i
        for i in done
        if cited & (set(steps[i].source_ids) | set(citations.cited_ids(steps[i].observation or "")))
    ]
    return drawn or done


def _title(report: str, question: str) -> str:
    first = report.lstrip().split("\n", 1)[0]
    return first[2:].strip() if first.startswith("# ") else question


def _without_note(checked: str, summary: VerificationSummary) -> str:
    """The verified section without the verification line the verifier appends to a report."""
    note = verification.verification_note(summary)
    text = checked.rstrip()
    return text[: -len(note)].rstrip() if text.endswith(note) else text


def _merged_claims(old: list[Claim], old_body: str, new: list[Claim]) -> list[Claim]:
    """The new version's claims: the old section's claims give way to the rewritten section's,
    in their place; every other claim stays as it was."""
    replaced = {s.claim.casefold() for s in verification.cited_sentences(old_body)}
    merged: list[Claim] = []
    placed = False
    for claim in old:
        if not claim.removed and claim.text.casefold() in replaced:
            if not placed:
                merged += new
                placed = True
            continue
        merged.append(claim)
    return merged if placed else [*merged, *new]


def _recounted(old: VerificationSummary | None, claims: list[Claim]) -> VerificationSummary | None:
    """The whole report's counts over the new version's claims (None: it was never verified)."""
    if old is None or not old.enabled:
        return old
    summary = verification.summarize(claims, method=old.method)
    summary.checked_by, summary.calibration = old.checked_by, old.calibration
    return summary
