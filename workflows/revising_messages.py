"""What revising one section takes and gives: the messages between the client, the
`ReviseSectionWorkflow` and its `save_revision` activity, and a version as the library lists it.
In a module of their own so the rows (workflows/roles.py) can name them without importing the
workflow that uses them.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from workflows.models import Claim, ResearchResult, VerificationSummary

#: The longest feedback a person may give one section (characters).
FEEDBACK_MAX_CHARS = 2000
#: The most versions the library keeps of one report (each is the whole report).
MAX_VERSIONS = 50


class ReviseSectionInput(BaseModel):
    """One section of a finished research to rewrite with a person's feedback."""

    research_id: str
    #: The stored run the version belongs to (the library keys research by workflow and run id).
    run_id: str
    owner: str
    #: The section's number, from 1 (workflows/kit/sections.py says which headings count).
    section: int
    feedback: str
    #: The version the revision starts from (1: the report as the research wrote it).
    base_version: int
    #: The research as the library has it at `base_version`: its report, plan, sources, evidence.
    result: ResearchResult


class SaveRevisionInput(BaseModel):
    research_id: str
    run_id: str
    owner: str
    base_version: int
    section: int
    heading: str
    feedback: str
    #: The whole report of the new version: the old one with only this section rewritten.
    report_markdown: str
    #: Every claim of the new version (the section's own re-checked, the others as they were),
    #: and the whole report's counts over them.
    claims: list[Claim] = Field(default_factory=list)
    verification: VerificationSummary | None = None
    #: What re-checking the rewritten section found.
    section_verification: VerificationSummary
    engine: str = ""
    #: The revision's workflow id and run id: a retried save writes the version once.
    revised_by: str
    created_at: datetime


class SaveRevisionOutput(BaseModel):
    version: int
    created: bool = True


class RevisionOutcome(BaseModel):
    """What a revision did, as every front end reports it."""

    research_id: str
    version: int
    section: int
    heading: str
    feedback: str
    #: The rewritten section's body (with its marker line), and what re-checking it found.
    section_markdown: str
    verification: VerificationSummary
    report_markdown: str


class ReportVersion(BaseModel):
    """One version of a stored report: 1 is the research's own; each later one revised one
    section."""

    version: int
    #: The section the version revised, its heading and the feedback (None for version 1).
    section: int | None = None
    heading: str | None = None
    feedback: str | None = None
    created_at: datetime
