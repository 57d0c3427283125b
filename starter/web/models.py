"""The JSON API's contract: one request or response model per route (as the FastAPI template's
`models.py`), and `ResearchView`, the one model that says whether a research is running or
finished, which the API and the pages both read.

The research's own vocabulary (`ResearchStatus`, `ResearchResult`) comes from `workflows/`: a
research shown while it runs is its status plus `id`, `owner` and `status` (Temporal's word for the
execution: `running`, `completed`, `failed`, ...); once finished, its result plus the same three.
`running` says which of the two it is.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from starter.client.mine import ListedResearch
from starter.exports import FORMATS
from workflows.events import Event
from workflows.models import ResearchResult, ResearchStatus
from workflows.revising_messages import ReportVersion


def _known_format(name: str) -> str:
    if name not in FORMATS:
        raise ValueError(f"choose one of {', '.join(FORMATS)}")
    return name


#: `?format=` of a report download: a name in the one table of export formats (listed as the
#: schema's enum, checked as it is read).
ExportFormat = Annotated[
    str, AfterValidator(_known_format), Field(json_schema_extra={"enum": list(FORMATS)})
]


class ResearchCreate(BaseModel):
    """`POST /api/research`: the request fields of the `research` command (see
    `starter.client.requests.OPTIONS`) and `attended`. Validated by `starter.client.requests.build_request`, the
    one validation every client shares (same one-line errors as the CLI and the MCP tool), so
    each field is taken here as given."""

    model_config = ConfigDict(extra="allow")

    question: Any = Field(default=None, description="the research question")
    attended: Any = Field(
        default=True,
        description="true (default): someone will answer a review on the research's page",
    )

    def values(self) -> dict[str, Any]:
        """The request's fields as given (for `build_request`), without `attended`."""
        given = self.model_dump(exclude_unset=True)
        given.pop("attended", None)
        return given


class ResearchCreated(BaseModel):
    id: str


#: One research in the user's list, running or stored (times in UTC, with a `Z`): the client's one
#: row of a person's research, as the CLI's `list` and the MCP tool `list_research` have it too.
ResearchListItem = ListedResearch


class RunningResearch(ResearchStatus):
    """A research that runs: its `status` query, with its id, owner and execution status."""

    id: str
    status: str = "running"
    running: Literal[True] = True


class FinishedResearch(ResearchResult):
    """A closed research with a result (from the library, else Temporal); `title`: the one its
    owner gave it in the library (its report's title too), None when none of their own."""

    id: str
    status: str
    running: Literal[False] = False
    title: str | None = None
    #: The version of the report shown (1: as the research wrote it; each later one revised one
    #: section: `POST /api/research/{id}/sections/{n}/revise`), and every version there is.
    version: int = 1
    versions: list[ReportVersion] = Field(default_factory=list)


class FailedResearch(BaseModel):
    """A closed research without a result: why there is none."""

    id: str
    owner: str
    status: str
    running: Literal[False] = False
    failure: str


ResearchShown = RunningResearch | FinishedResearch | FailedResearch


class ResearchView(BaseModel):
    """One research as a person may see it: running (`live`, its status query) or finished
    (`result`, or `failure` when it ended without one)."""

    id: str
    owner: str
    status: str
    live: ResearchStatus | None = None
    result: ResearchResult | None = None
    failure: str | None = None
    #: The title its owner gave it in the library, if any.
    title: str | None = None
    #: A page's running research whose busy worker did not answer its status in time: what to say
    #: instead of its status ("still working"), never an error.
    busy: str | None = None
    #: The question it was started with, when neither its status nor its result says it (a busy
    #: worker's): its page is headed by the question, not by its id.
    asked: str | None = None
    #: A page's running research: its events so far, rendered in the Progress log (it is not
    #: empty without JavaScript; the live log goes on after the last of them).
    events: list[Event] = Field(default_factory=list)
    #: A finished research from the library: the version of its report `result` holds, and
    #: every version (None and empty when the library does not have it).
    version: int | None = None
    versions: list[ReportVersion] = Field(default_factory=list)

    @property
    def running(self) -> bool:
        return self.live is not None or self.busy is not None

    @property
    def stage_shown(self) -> str:
        """The stage a page shows: the outcome, the running stage, or Temporal's word for a
        research whose busy worker did not say its stage (the note beside it says "still
        working": said twice, it read like a stuck page)."""
        if self.result is not None:
            return self.result.outcome.value
        if self.live is not None:
            return self.live.stage.value
        return self.status if self.busy else ""

    @property
    def question(self) -> str:
        found = self.live or self.result
        return found.query if found is not None else self.asked or self.id

    @property
    def heading(self) -> str:
        """What the research is called: its owner's title, else its question."""
        return self.title or self.question

    def shown(self) -> ResearchShown:
        """The API's answer: one flat object, the status or the result with the head."""
        head = {"id": self.id, "owner": self.owner, "status": self.status}
        if self.live is not None:
            return RunningResearch(**{**self.live.model_dump(), **head})
        if self.result is not None:
            return FinishedResearch(
                **{**self.result.model_dump(), **head},
                title=self.title,
                version=self.version or 1,
                versions=self.versions,
            )
        return FailedResearch(
            id=self.id, owner=self.owner, status=self.status, failure=self.failure or "no result"
        )


class Answer(BaseModel):
    model_config = ConfigDict(extra="forbid")
    answer: str


class Step(BaseModel):
    model_config = ConfigDict(extra="forbid")
    title: str
    description: str = ""


class Review(BaseModel):
    """What the `plan_review` / `report_review` signals take; `steps` replace a plan's pending steps."""

    model_config = ConfigDict(extra="forbid")
    decision: Literal["approve", "revise", "cancel"]
    feedback: str = ""
    steps: list[Step] | None = None
    #: The round the reviewer saw (the plan iteration, or the report review round): an answer
    #: meant for an earlier one is refused (422, with the workflow's reason).
    round: int | None = Field(default=None, ge=1)


class Steered(RunningResearch):
    """An answer or review the research took, with its status after it."""

    accepted: str


class Accepted(BaseModel):
    """An answer or review the research took, when its status could not be read after it."""

    id: str
    owner: str
    accepted: str


class CancelRequested(BaseModel):
    id: str
    cancel_requested: bool = True


class LibraryItem(BaseModel):
    """One stored research matching a library search; `title` is what the library calls it: the
    title its owner gave it, else its question."""

    id: str
    run_id: str
    question: str
    title: str
    outcome: str
    finished_at: str
    sources: int
    claims: int
    supported: int | None
    owner: str


class LibraryRename(BaseModel):
    """`PATCH /api/library/{id}`: the research's new title (checked by `starter.client.titles`)."""

    model_config = ConfigDict(extra="forbid")
    title: Any = Field(default=None, description="the new title: 1 to 200 characters")


class Health(BaseModel):
    ok: bool = True
    temporal: bool


class DocumentItem(BaseModel):
    """One of the user's uploaded documents (`GET /api/documents`; time in UTC, with a `Z`)."""

    id: str
    name: str
    size: int
    uploaded_at: str


# --- standing research (INTERFACE.md "Standing research and notifications") ---------------


class StandingCreate(BaseModel):
    """`POST /api/standing`: `question`, `every` or `cron`, `notify` (webhook URLs of its own),
    `max_runs`, and any request field of `POST /api/research`."""

    model_config = ConfigDict(extra="allow")

    question: Any = Field(default=None, description="the research question")
    every: str | None = Field(default=None, description="e.g. 12h, 1d, 7d")
    cron: str | None = Field(default=None, description="e.g. '0 8 * * 1' (UTC)")
    notify: list[str] = Field(default_factory=list, description="webhook URLs of its own")
    max_runs: int | None = Field(default=None, description="stop after this many scheduled runs")

    def request_values(self) -> dict[str, Any]:
        given = self.model_dump(exclude_unset=True)
        for name in ("every", "cron", "notify", "max_runs", "attended"):
            given.pop(name, None)
        return given


class StandingCreated(BaseModel):
    id: str


class RunStarted(BaseModel):
    research_id: str


class Deleted(BaseModel):
    id: str
    deleted: bool = True
