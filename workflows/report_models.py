"""A long report written in pieces (workflows/checks/reporting.py): the outline, each section and
the summary, each its own call with a reply of its own size.

Apart from the other roles' inputs and outputs (workflows/activity_models.py, whose conventions
they follow) because they belong together: the outline plans the sections that the section and
summary calls are then given, and a section's revision (workflows/revising/) asks for one again.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from workflows.activity_models import AboutQuestion, LLMOutput
from workflows.models import Claim, Evidence, Plan, PlanStep, Source


class ReportSection(BaseModel):
    """One section of a long report, as the outline plans it."""

    heading: str
    #: What the section must cover, in a sentence.
    brief: str = ""
    #: The plan's steps (0-based) whose findings the section draws on.
    step_indexes: list[int] = Field(default_factory=list)


class OutlineInput(AboutQuestion):
    plan: Plan
    sources: list[Source]
    notes: list[str] = Field(default_factory=list)
    feedback: list[str] = Field(default_factory=list)
    #: The report's length target in words (by depth, see workflows/checks/reporting.py).
    target_words: int = 1200


class OutlineOutput(LLMOutput):
    title: str
    #: Text shown under the title: what the question follows up, how it was clarified.
    lead: str = ""
    sections: list[ReportSection] = Field(default_factory=list)
    #: A closing line the engine adds to every report it writes (the offline engine's disclaimer).
    footer: str = ""
    engine: str = ""


class SectionInput(AboutQuestion):
    title: str
    section: ReportSection
    #: The steps this section draws on, with their observations.
    steps: list[PlanStep]
    #: Only the evidence and sources those steps cite: citations keep their global ids.
    evidence: list[Evidence] = Field(default_factory=list)
    #: What was read of those sources (workflows/accounting/parts.Material.read): not shown to the writer;
    #: the guard on what a model writes checks its sentences against it, so a faithful paraphrase
    #: of a paragraph that was read is not taken for an invention.
    read: list[Evidence] = Field(default_factory=list, json_schema_extra={"shown": False})
    sources: list[Source] = Field(default_factory=list)
    #: The other sections' headings, so this one does not repeat them.
    other_headings: list[str] = Field(default_factory=list)
    #: Observations of the steps of earlier sections (findings already told there).
    told_before: list[str] = Field(default_factory=list)
    feedback: list[str] = Field(default_factory=list)
    target_words: int = 300
    #: A person's revision of one finished section (workflows/revising/): the section as it
    #: stands, which the rewrite keeps where the feedback asks nothing else. Empty while a research
    #: writes its report (and then not sent at all). A model reads it from `feedback`.
    current: str = Field(default="", exclude_if=lambda v: not v, json_schema_extra={"shown": False})


class SectionOutput(LLMOutput):
    #: The section's body in markdown, without its heading.
    markdown: str
    claims: list[Claim] = Field(default_factory=list)


class SummaryInput(AboutQuestion):
    title: str
    sections: list[ReportSection]
    #: Every completed step, with its observation: the summary is written beside the sections.
    steps: list[PlanStep]
    sources: list[Source] = Field(default_factory=list)
    feedback: list[str] = Field(default_factory=list)
    target_words: int = 150


class SummaryOutput(LLMOutput):
    markdown: str
    claims: list[Claim] = Field(default_factory=list)
