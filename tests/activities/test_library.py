"""The research library (storage/, activities/library.py): one schema on SQLite and
PostgreSQL, every research written once, read back equal."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy
from temporalio import activity
from temporalio.exceptions import ApplicationError
from temporalio.testing import WorkflowEnvironment

from storage import database, store
from tests.conftest import REPO
from tests.support.doubles import Script
from tests.support.postgres import postgres_cluster
from tests.workflow.test_workflow import run_research
from workflows.activity_models import SaveResearchInput
from workflows.models import (
    Claim,
    Clarification,
    Critique,
    Depth,
    Evidence,
    LoopBack,
    Plan,
    PlanStep,
    QueryMode,
    Reflection,
    ReflectionDecision,
    ResearchRequest,
    ResearchResult,
    Source,
    Stage,
    Stats,
    StepStatus,
    TokenCount,
    Verdict,
    VerificationSummary,
)

T0 = datetime(2026, 11, 20, 9, 30, tzinfo=UTC)


def rich_result(query: str = "How did Roman aqueducts keep water clean?") -> ResearchResult:
    """A research with every field the library stores filled in."""
    return ResearchResult(
        query=query,
        outcome=Stage.COMPLETED,
        report_markdown="# Aqueducts\n\nSettling tanks [1].\n",
        sources=[
            Source(
                id=1,
                url="https://example.org/a",
                title="Aqueducts",
                provider="searxng",
                digest="ab12",
            ),
            Source(id=2, url="file:///docs/b.md", title="B", provider="local"),
        ],
        claims=[
            Claim(
                text="Settling tanks.",
                source_ids=[1],
                verdict=Verdict.SUPPORTED,
                reason="says so",
                checked_by="judge",
            ),
            Claim(
                text="Narrowed.",
                source_ids=[1, 2],
                verdict=Verdict.PARTIAL,
                reason="half",
                checked_by="lexical",
                original="Broad claim.",
            ),
            Claim(
                text="Invented.",
                source_ids=[2],
                verdict=Verdict.UNSUPPORTED,
                reason="no",
                removed=True,
            ),
        ],
        clarifications=[
            Clarification(question="Which city?", answer="Rome"),
            Clarification(question="Unanswered?"),
        ],
        plan=Plan(
            title="Plan",
            thought="why",
            iteration=2,
            steps=[
                PlanStep(
                    title="Tanks",
                    description="d",
                    status=StepStatus.COMPLETED,
                    observation="o [1]",
                    source_ids=[1],
                ),
                PlanStep(title="Later", status=StepStatus.SKIPPED, origin="loop_back"),
            ],
        ),
        plan_iterations=2,
        reflections=[
            Reflection(
                decision=ReflectionDecision.ADJUST, reasoning="gap", suggested_changes=["more"]
            ),
            Reflection(decision=ReflectionDecision.COMPLETE, reasoning="done"),
        ],
        stage_history=[Stage.ROUTING, Stage.PLANNING, Stage.COMPLETED],
        stats=Stats(
            llm_calls=9,
            llm_calls_by_role={"plan": 2},
            llm_retries=1,
            llm_retries_by_role={"plan": 1},
            tokens_by_role={"plan": TokenCount(prompt_tokens=10, completion_tokens=3)},
            searches=4,
            pages_fetched=3,
            duration_s=12.5,
            prompt_tokens=10,
            completion_tokens=3,
        ),
        depth=Depth.MEDIUM,
        mode=QueryMode.DEEP,
        engine="openai:gpt-x",
        loop_backs=[
            LoopBack(after_step=1, agent="researcher", query="q", accepted=False, reason="full")
        ],
        evidence=[Evidence(source_id=1, position=3, text="Settling tanks let sand fall out.")],
        verification=VerificationSummary(
            method="lexical+judge",
            claims=3,
            supported=1,
            partial=1,
            unsupported=1,
            removed=1,
            revised=1,
            share_supported=0.3333,
        ),
        critique=Critique(
            quality=0.7,
            quality_reason="ok",
            hallucination_risk=0.2,
            hallucination_reason="one partial",
        ),
        follow_up_of="research-earlier",
        notes=["a note"],
    )


def record(
    workflow_id: str = "research-1", run_id: str = "run-1", finished: datetime = T0, **kw: Any
) -> SaveResearchInput:
    return SaveResearchInput(
        workflow_id=workflow_id,
        run_id=run_id,
        started_at=finished - timedelta(minutes=3),
        finished_at=finished,
        result=rich_result(**kw),
    )


_postgres: dict[str, str | None] = {}


@pytest.fixture(scope="module")
def postgres_url() -> Iterator[str | None]:
    with postgres_cluster() as url:
        _postgres["reason"] = getattr(postgres_cluster, "reason", None)
        yield url


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'nested' / 'library.sqlite'}"
    url = request.getfixturevalue("postgres_url")
    if url is None:
        pytest.skip(f"no PostgreSQL: {_postgres.get('reason')}")
    engine = sqlalchemy.create_engine(store.database_url(url))
    with engine.begin() as connection:  # every test starts from an empty library
        for table in (
            "research_revision",
            "research_reflection",
            "research_clarification",
            "research_evidence",
            "research_claim",
            "research_source",
            "research",
            "quota_locks",
            "standing_created",
            "alembic_version",
        ):
            connection.exec_driver_sql(f"DROP TABLE IF EXISTS {table} CASCADE")
    engine.dispose()
    database.ENGINES.clear()
    return url


def library_at(path: Path, revision: str, *statements: str) -> str:
    """A SQLite library migrated only to REVISION, with STATEMENTS run in it: a library written by
    an older version, for the tests of the migrations after it. Its URL."""
    from alembic import command
    from alembic.config import Config

    url = f"sqlite:///{path}"
    config = Config()
    config.set_main_option("script_location", str(store.MIGRATIONS))
    engine = sqlalchemy.create_engine(store.database_url(url))
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, revision)
        for statement in statements:
            connection.exec_driver_sql(statement)
    engine.dispose()
    return url


def count(url: str, table: str) -> int:
    with store.engine_for(store.database_url(url)).connect() as connection:
        return int(connection.exec_driver_sql(f"SELECT count(*) FROM {table}").scalar_one())


def test_a_research_is_read_back_equal_to_what_was_written(db_url: str) -> None:
    saved = store.write(record(), db_url)
    stored = store.load_research(db_url, "research-1")

    assert saved.created
    assert stored is not None and stored.result == rich_result()
    assert (stored.started_at, stored.finished_at) == (T0 - timedelta(minutes=3), T0)
    assert store.load_research(db_url, "run-1") == stored  # by run id too
    tables = set(sqlalchemy.inspect(store.engine_for(store.database_url(db_url))).get_table_names())
    assert {
        "research",
        "research_source",
        "research_claim",
        "research_evidence",
        "research_clarification",
        "research_reflection",
        "alembic_version",
    } <= tables


def test_writing_the_same_run_twice_stores_it_once(db_url: str) -> None:
    assert store.write(record(), db_url).created
    again = store.write(record(), db_url)

    assert not again.created
    assert count(db_url, "research") == 1
    assert (count(db_url, "research_claim"), count(db_url, "research_source")) == (3, 2)


WRITER = """
import sys, time
from pathlib import Path
from storage import store
from tests.activities.test_library import record
url, name, go = sys.argv[1], sys.argv[2], Path(sys.argv[3])
while not go.exists():
    time.sleep(0.005)
created = [store.write(record(workflow_id=f"{name}-{i}", run_id=f"run-{name}-{i}"), url).created for i in range(5)]
shared = store.write(record(workflow_id="research-shared", run_id="run-shared"), url).created
print(sum(created), int(shared))
"""


def test_worker_processes_writing_into_a_new_library_at_once_store_each_research_once(
    db_url: str, tmp_path: Path
) -> None:
    """Four processes start together on a library nobody has created yet: they migrate it one
    at a time, write their own research without "database is locked", and the research all of
    them write (one activity retried on four workers) is stored once."""
    go = tmp_path / "go"
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, db_url, f"worker{n}", str(go)],
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(4)
    ]
    time.sleep(1.0)  # every process has imported what it needs and waits at the line
    go.touch()
    outcomes = [w.communicate(timeout=120) for w in writers]

    assert [w.returncode for w in writers] == [0] * 4, [err[-2000:] for _, err in outcomes]
    created = [tuple(map(int, out.split())) for out, _ in outcomes]
    assert [own for own, _ in created] == [5] * 4
    assert sum(shared for _, shared in created) == 1
    assert count(db_url, "research") == 4 * 5 + 1
    assert count(db_url, "research_claim") == (4 * 5 + 1) * 3


def test_the_newest_run_of_a_workflow_id_is_shown_and_history_is_newest_first(db_url: str) -> None:
    store.write(record(run_id="run-1", finished=T0), db_url)
    store.write(
        record(run_id="run-2", finished=T0 + timedelta(hours=1), query="A later question"), db_url
    )
    store.write(
        record("research-2", "run-3", T0 + timedelta(days=1), query="Tide pools and storms"), db_url
    )

    assert store.load_research(db_url, "research-1").run_id == "run-2"  # type: ignore[union-attr]
    entries = store.list_research(db_url)
    assert [e.run_id for e in entries] == ["run-3", "run-2", "run-1"]
    assert entries[0].supported == 1 and entries[0].claims == 3 and entries[0].sources == 2
    assert [e.run_id for e in store.list_research(db_url, contains="TIDE")] == ["run-3"]
    assert [
        e.run_id for e in store.list_research(db_url, contains="100%_")
    ] == []  # wildcards are text
    assert store.load_research(db_url, "nope") is None


def test_a_url_that_names_no_database_is_a_permanent_error_without_the_password() -> None:
    with pytest.raises(ApplicationError) as failed:
        store.write(record(), "nosuchdb://user:hunter2@host/db")
    assert failed.value.non_retryable and failed.value.type == "LibraryConfigError"
    assert "hunter2" not in failed.value.message and "***" in failed.value.message


def test_an_unreachable_postgresql_is_worth_retrying_and_never_shows_the_password() -> None:
    with pytest.raises(ApplicationError) as failed:
        store.write(record(), "postgresql://user:hunter2@127.0.0.1:1/db")
    assert not failed.value.non_retryable and failed.value.type == "LibraryUnavailable"
    assert "hunter2" not in failed.value.message and "unavailable" in failed.value.message


async def test_a_worker_that_dies_between_the_commit_and_reporting_it_writes_the_research_once(
    time_skipping_env: WorkflowEnvironment,
    tmp_path: Path,
) -> None:
    """The real workflow, the real library write; the first attempt commits and then fails as if
    the worker had died before telling Temporal. Temporal retries; the retry finds the row."""
    url = f"sqlite:///{tmp_path / 'library.sqlite'}"
    outcomes: list[bool] = []

    def save(rec: SaveResearchInput) -> Any:
        saved = store.write(rec, url)
        outcomes.append(saved.created)
        if activity.info().attempt == 1:
            raise RuntimeError("worker lost after the commit")
        return saved

    script = Script(save_research=save)
    result, _ = await run_research(
        time_skipping_env.client,
        script,
        ResearchRequest(query="How do Rust lifetimes work?", depth=Depth.LIGHT),
    )

    assert outcomes == [True, False]
    assert count(url, "research") == 1
    [entry] = store.list_research(url)
    assert store.load_research(url, entry.workflow_id).result == result  # type: ignore[union-attr]
    assert not any("could not be saved" in note for note in result.notes)


# --- hardening: NUL bytes, data errors, Unicode filters -------------------------------------------


def test_nul_bytes_are_stripped_and_the_research_is_stored(db_url: str) -> None:
    """PostgreSQL refuses text with NUL (0x00) bytes; a page, an answer or a question may carry one.
    Every string of the record loses them, so the research is stored and reads back without them."""
    clean = rich_result()
    dirty = clean.model_copy(
        update={
            "query": "How did Roman\x00 aqueducts keep water clean?\x00",
            "report_markdown": "# Aque\x00ducts\n\nSettling tanks [1].\n",
            "clarifications": [
                Clarification(question="Which\x00 city?", answer="Ro\x00me"),
                Clarification(question="Unanswered?"),
            ],
            "evidence": [
                Evidence(source_id=1, position=3, text="Settling\x00 tanks let sand fall out.\x00")
            ],
            "sources": [
                Source(
                    id=1,
                    url="https://example.org/a",
                    title="Aque\x00ducts",
                    provider="searxng",
                    digest="ab12",
                ),
                Source(id=2, url="file:///docs/b.md", title="B", provider="local"),
            ],
            "notes": ["a\x00 note"],
        }
    )
    rec = record().model_copy(update={"result": dirty})

    assert store.write(rec, db_url).created
    stored = store.load_research(db_url, "research-1")
    assert stored is not None and stored.result == clean
    assert (
        store.load_research(db_url, "research-\x001") == stored
    )  # on PostgreSQL a NUL here would be refused
    assert [e.query for e in store.list_research(db_url)] == [clean.query]


def test_a_write_the_database_refuses_is_a_permanent_one_line_error(tmp_path: Path) -> None:
    """A constraint the data breaks (here a trigger that refuses every source) is no outage:
    retrying cannot help, and the research must not be reported as already stored."""
    url = f"sqlite:///{tmp_path / 'library.sqlite'}"
    with store.engine_for(store.database_url(url)).begin() as connection:
        connection.exec_driver_sql(
            "CREATE TRIGGER no_sources BEFORE INSERT ON research_source "
            "BEGIN SELECT RAISE(ABORT, 'sources refused\nsecond line'); END"
        )
    with pytest.raises(ApplicationError) as failed:
        store.write(record(), url)
    assert failed.value.non_retryable and failed.value.type == "LibraryDataError"
    assert "sources refused" in failed.value.message and "\n" not in failed.value.message
    assert store.list_research(url) == []


@pytest.mark.parametrize(
    "db_url", ["postgresql"], indirect=True
)  # SQLite does not enforce String(255)
def test_a_value_postgresql_rejects_is_a_permanent_error_not_an_outage(db_url: str) -> None:
    with pytest.raises(ApplicationError) as failed:
        store.write(record(workflow_id="w" * 300), db_url)
    assert failed.value.non_retryable and failed.value.type == "LibraryDataError"
    assert "\n" not in failed.value.message and "unavailable" not in failed.value.message


@pytest.mark.parametrize("kind", [sqlalchemy.exc.DataError, sqlalchemy.exc.IntegrityError])
def test_data_and_integrity_errors_are_classified_as_permanent(
    kind: type[sqlalchemy.exc.DBAPIError],
) -> None:
    url = store.database_url("postgresql://user:hunter2@db.example/library")
    with pytest.raises(ApplicationError) as failed, database.failures_classified(url):
        raise kind("INSERT ...", {}, Exception("value refused for password hunter2\nDETAIL: more"))
    assert failed.value.non_retryable and failed.value.type == "LibraryDataError"
    assert "hunter2" not in failed.value.message and "\n" not in failed.value.message


def test_the_history_filter_ignores_case_beyond_ascii(db_url: str) -> None:
    store.write(record(run_id="run-1", finished=T0, query="Was ist über Wasser bekannt?"), db_url)
    store.write(
        record(run_id="run-2", finished=T0 + timedelta(hours=1), query="STRASSE und Verkehr"),
        db_url,
    )
    store.write(
        record(run_id="run-3", finished=T0 + timedelta(hours=2), query="ΣΟΦΙΑ and wisdom"), db_url
    )

    def found(text: str) -> list[str]:
        return [e.run_id for e in store.list_research(db_url, contains=text)]

    assert found("ÜBER") == ["run-1"]
    assert found("straße") == ["run-2"]
    assert found("σοφια") == ["run-3"]
    assert found("u\u0308ber") == ["run-1"]  # "ü" typed as u + combining diaeresis
    assert found("wisdom") == ["run-3"] and found("nothing like it") == []
    assert [e.run_id for e in store.list_research(db_url, contains="A", limit=2)] == [
        "run-3",
        "run-2",
    ]


def test_each_user_lists_and_searches_only_their_own_research(db_url: str) -> None:
    """The web app's users share one library: a list or a search by one never shows another's."""
    for i, owner in enumerate(("alice", "bob", "alice")):
        result = rich_result(query=f"Aqueduct question {i}").model_copy(update={"owner": owner})
        store.write(
            SaveResearchInput(
                workflow_id=f"r{i}",
                run_id=f"run{i}",
                started_at=T0,
                finished_at=T0 + timedelta(seconds=i),
                result=result,
            ),
            db_url,
        )
    assert [e.workflow_id for e in store.list_research(db_url, owner="alice")] == ["r2", "r0"]
    assert [
        e.workflow_id for e in store.list_research(db_url, owner="bob", contains="aqueduct")
    ] == ["r1"]
    assert {e.owner for e in store.list_research(db_url)} == {"alice", "bob"}
    stored = store.load_research(db_url, "r1")
    assert stored is not None and stored.result.owner == "bob"


def test_research_stored_before_owners_belongs_to_local(tmp_path: Path) -> None:
    """Migration 0004 on a library of revision 0003 that holds a research: it becomes `local`'s."""
    url = library_at(
        tmp_path / "old.sqlite",
        "0003",
        "INSERT INTO research (workflow_id, run_id, query, outcome, mode, depth, engine, started_at, finished_at,"
        " report_markdown, plan_iterations, stage_history, loop_backs, stats, notes) VALUES ('old', 'run',"
        " 'Old question', 'completed', 'deep', 'light', 'offline', '2026-01-01', '2026-01-01', '# Old', 1,"
        " '[]', '[]', '{}', '[]')",
    )
    [entry] = store.list_research(url)  # the store migrates the rest of the way on first use
    assert entry.owner == "local" and store.list_research(url, owner="alice") == []


def test_a_renamed_research_keeps_its_title_and_is_found_by_it_only_for_its_owner(
    db_url: str,
) -> None:
    """Renaming: every run of the research takes the title; the library read again
    shows it, a search finds it by the new title (and still by the question); another user's
    rename changes nothing."""
    store.write(record(run_id="run-1", finished=T0), db_url)
    store.write(record(run_id="run-2", finished=T0 + timedelta(hours=1)), db_url)

    assert store.rename_research(db_url, "research-1", "bob", "Bob's title") is None
    entry = store.rename_research(db_url, "research-1", "local", "Water in Rome")

    assert entry is not None and (entry.run_id, entry.title) == ("run-2", "Water in Rome")
    stored = store.load_research(db_url, "research-1")
    assert stored is not None and stored.title == "Water in Rome"
    assert [e.title for e in store.list_research(db_url)] == ["Water in Rome"] * 2
    assert [e.run_id for e in store.list_research(db_url, contains="IN ROME")] == [
        "run-2",
        "run-1",
    ]
    assert len(store.list_research(db_url, contains="aqueducts keep water")) == 2
    assert [s.title for s in store.started_before(db_url, owner="local")] == ["Water in Rome"]


def test_research_stored_before_titles_keeps_its_question_and_can_be_renamed(
    tmp_path: Path,
) -> None:
    """Migration 0006 on a library of revision 0005 that holds a research: the research is kept,
    with no title of its own (its question is its title), and can be renamed."""
    url = library_at(
        tmp_path / "old.sqlite",
        "0005",
        "INSERT INTO research (workflow_id, run_id, query, outcome, mode, depth, engine, started_at, finished_at,"
        " report_markdown, plan_iterations, stage_history, loop_backs, stats, notes, owner) VALUES ('old', 'run',"
        " 'Old question', 'completed', 'deep', 'light', 'offline', '2026-01-01', '2026-01-01', '# Old', 1,"
        " '[]', '[]', '{}', '[]', 'local')",
    )

    [entry] = store.list_research(url)  # the store migrates the rest of the way on first use
    assert (entry.workflow_id, entry.query, entry.title) == ("old", "Old question", None)
    stored = store.load_research(url, "old")
    assert stored is not None and stored.title is None and stored.result.query == "Old question"
    assert store.rename_research(url, "old", "local", "New name") is not None
    assert [e.title for e in store.list_research(url, contains="new name")] == ["New name"]


def test_a_standing_run_reads_its_previous_run_with_fingerprints_and_evidence(db_url: str) -> None:
    """What the comparison of a standing research's next run needs of this one: each source's
    number and fingerprint, its claims, and the evidence paragraphs of the sources they cite."""
    from storage import standing

    first = record(workflow_id="standing-1-a")
    first.result.standing_id = "standing-1"
    store.write(first, db_url)
    previous = standing.previous_run(db_url, "standing-1", "standing-1-b")
    assert previous is not None and previous.research_id == "standing-1-a"
    assert [(s.id, s.url, s.digest) for s in previous.sources] == [
        (1, "https://example.org/a", "ab12"),
        (2, "file:///docs/b.md", ""),
    ]
    assert [c.text for c in previous.claims] == ["Settling tanks.", "Narrowed.", "Invented."]
    assert [(e.source_id, e.text) for e in previous.evidence] == [
        (1, "Settling tanks let sand fall out.")
    ]


def test_a_library_whose_web_app_made_the_sessions_table_migrates_and_keeps_its_sign_outs(
    tmp_path: Path,
) -> None:
    """Migration 0008: the signed-out sessions' table belongs to the migrations now. A
    library of revision 0007 where the web app had made the table itself keeps it, rows and all;
    a new library gets it from the migration."""
    url = library_at(
        tmp_path / "old.sqlite",
        "0007",
        "CREATE TABLE web_revoked_sessions (session_id VARCHAR(64) PRIMARY KEY,"
        " expires_at INTEGER NOT NULL)",
        "INSERT INTO web_revoked_sessions VALUES ('s1', 4102444800)",
    )

    assert count(url, "web_revoked_sessions") == 1  # the store migrated it on first use
    assert count(url, "alembic_version") == 1
    fresh = f"sqlite:///{tmp_path / 'new.sqlite'}"
    assert count(fresh, "web_revoked_sessions") == 0


def test_the_library_counts_only_the_claims_it_checked(db_url: str) -> None:
    """Edges: a cancelled entry read "1 of 0 claims supported", an unchecked one "0 of 0"."""
    cancelled = record("research-cancelled")
    cancelled.result.verification = VerificationSummary(enabled=True, claims=1, supported=1)
    store.write(cancelled, db_url)
    unchecked = record("research-unchecked")
    unchecked.result.verification = VerificationSummary(enabled=True, claims=0, supported=0)
    store.write(unchecked, db_url)
    shown = {e.workflow_id: (e.supported, e.claims) for e in store.list_research(db_url)}
    assert shown["research-cancelled"] == (1, 1)
    assert shown["research-unchecked"][0] is None


def test_a_paper_source_keeps_its_metadata_in_the_library(db_url: str) -> None:
    """The reference exports and sources lists read a stored paper as the paper it is."""
    paper = Source(
        id=3,
        url="https://doi.org/10.1234/aqua.2019",
        title="Settling basins of Roman aqueducts",
        provider="openalex",
        doi="10.1234/aqua.2019",
        arxiv_id="1901.00001",
        authors=["Giulia Rossi", "王小明"],
        year=2019,
        venue="Journal of Water History",
        read="abstract",
        retracted=True,
        kind="article",
    )
    result = rich_result().model_copy(update={"sources": [*rich_result().sources, paper]})
    store.write(record().model_copy(update={"result": result}), db_url)

    stored = store.load_research(db_url, "research-1")

    assert stored is not None and stored.result.sources[-1] == paper
    assert stored.result.sources[0].doi == "" and stored.result.sources[0].authors == []
