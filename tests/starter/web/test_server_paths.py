"""The server's paths are never shown. A finished research whose sources are a
corpus file, an upload and a file of the interpreter's library, whose report, evidence, notes and
"what changed" spell their `file://` URLs, is read back through every door: the API's JSON, every
download, the page, the CLI's `show`, MCP's `get_report`, and a webhook's body; none of them holds
the corpus folder, the data folder or an owner's folder, and each names the source by the one
rule (its path inside the corpus, the upload's file name)."""

from __future__ import annotations

import io
import sys
import sysconfig
import zipfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

from activities.corpus.uploads import owner_folder, uploads_root
from activities.notify import body
from settings import Settings
from storage.public_names import PublicNames
from tests.starter.cli.test_starter import REPO, starter
from tests.starter.web.conftest import TOKENS, WebWorker, running_app, web_config
from tests.starter.web.reports import _result, store_research
from workflows.events import Event, EventKind
from workflows.models import Evidence, ResearchResult, Source
from workflows.standing_messages import Changes, Notice, NoticeKind, SourceRef

STDLIB = sysconfig.get_paths()["stdlib"]


def hostile_paths(tmp_path: Path) -> tuple[ResearchResult, list[str], dict[str, str]]:
    """The research, the folders that must never show, and the directories' settings."""
    corpus, data = tmp_path / "srv corpus", tmp_path / "app-data"
    upload = owner_folder(uploads_root(data), "alice") / "0a1b2c3d4e5f" / "Kraniche im Moor.md"
    in_corpus = (corpus / "birds" / "herons.md").resolve()
    urls = [in_corpus.as_uri(), upload.as_uri() + "#page=2", f"file://{STDLIB}/asyncio/tasks.py"]
    sources = [
        Source(id=i + 1, url=url, title=f"source {i + 1}", provider="local")
        for i, url in enumerate(urls)
    ]
    report = (
        "# Herons\n\nHerons wade [1] and cranes call [2] in tasks [3].\n\n## Sources\n\n"
        + "\n".join(f"- [{s.id}] {s.title} — {s.url}" for s in sources)
        + f"\n\nRead from {in_corpus} and {upload}.\n"
    )
    evidence = [Evidence(source_id=1, position=0, text=f"as {urls[0]} says")]
    changes = Changes(
        since_research_id="standing-0badc0de-2026-11-20T08:00:00Z",
        since=datetime(2026, 11, 20, 8, tzinfo=UTC),
        new_sources=[SourceRef(url=urls[1], title="new")],
        gone_sources=[SourceRef(url=urls[0], title="gone")],
    )
    result = _result(
        "Where do herons nest?", report, sources, evidence, [], owner="alice", changes=changes
    )
    result = result.model_copy(update={"notes": [f"could not read {upload}"]})
    never = [
        str(corpus.resolve()),
        str(data.resolve()),
        STDLIB,
        owner_folder(Path("/"), "alice").name,
    ]
    dirs = {"RESEARCH_CORPUS_DIR": str(corpus), "RESEARCH_DATA_DIR": str(data)}
    return result, never, dirs


def no_paths(text: str, never: list[str]) -> None:
    assert "file:" not in text
    for folder in never:
        assert folder not in text, folder
    assert "birds/herons.md" in text and "Kraniche im Moor.md" in text


def docx_text(raw: bytes) -> str:
    with zipfile.ZipFile(io.BytesIO(raw)) as docx:
        return docx.read("word/document.xml").decode()


async def test_the_api_the_downloads_and_the_page_never_show_a_server_path(
    web_worker: WebWorker, tmp_path: Path
) -> None:
    result, never, dirs = hostile_paths(tmp_path)
    research_id = store_research(web_worker.db_url, result, "paths")
    config = web_config(
        web_worker,
        TOKENS,
        research_corpus_dir=Path(dirs["RESEARCH_CORPUS_DIR"]),
        research_data_dir=Path(dirs["RESEARCH_DATA_DIR"]),
    )
    with running_app(config, TOKENS) as web:
        async with web.client("alice") as alice:
            seen = [(await alice.get(f"/api/research/{research_id}")).text]
            seen.append((await alice.get(f"/research/{research_id}")).text)
            for fmt in ("md", "html"):
                got = await alice.get(f"/api/research/{research_id}/report?format={fmt}")
                seen.append(got.content.decode())
            docx = await alice.get(f"/api/research/{research_id}/report?format=docx")
            seen.append(docx_text(docx.content))
    for text in seen:
        no_paths(text.replace("&#x27;", "'"), never)


async def test_the_cli_and_mcp_never_show_a_server_path(
    web_worker: WebWorker, tmp_path: Path
) -> None:
    result, never, dirs = hostile_paths(tmp_path)
    research_id = store_research(web_worker.db_url, result, "paths")
    env = {
        "PATH": "/usr/bin:/bin",
        "LLM_PROVIDER": "offline",
        "RESEARCH_DB_URL": web_worker.db_url,
        "RESEARCH_USER": "alice",
        "TEMPORAL_ADDRESS": web_worker.address,
        **dirs,
    }
    shown = await starter("show", research_id, env=env)
    assert shown.code == 0, shown.err
    no_paths(shown.out, never)
    as_json = await starter("show", research_id, "--json", env=env)
    no_paths(as_json.out, never)
    server = StdioServerParameters(
        command=sys.executable, args=["-m", "starter", "mcp"], cwd=str(REPO), env=env
    )
    async with stdio_client(server) as (read, write), ClientSession(read, write) as mcp:
        await mcp.initialize()
        got = await mcp.call_tool("get_report", {"id": research_id})
        no_paths(got.content[0].text, never)


def test_a_webhook_and_an_email_body_never_show_a_server_path(tmp_path: Path) -> None:
    result, never, dirs = hostile_paths(tmp_path)
    cfg = Settings(
        _env_file=None,
        research_corpus_dir=Path(dirs["RESEARCH_CORPUS_DIR"]),
        research_data_dir=Path(dirs["RESEARCH_DATA_DIR"]),
    )
    notice = Notice(
        event=NoticeKind.CHANGED,
        research_id="standing-0badc0de-2026-11-27T08:00:00Z",
        owner="alice",
        question=result.query,
        at=datetime(2026, 11, 27, 8, tzinfo=UTC),
        standing_id="standing-0badc0de",
        changes=result.changes,
    )
    sent = str(body(cfg, notice))
    assert "file:" not in sent and all(folder not in sent for folder in never)
    assert "Kraniche im Moor.md#page=2" in sent and "birds/herons.md" in sent


def test_an_event_naming_sources_shows_their_names(tmp_path: Path) -> None:
    result, never, dirs = hostile_paths(tmp_path)
    event = Event(
        seq=4,
        at=datetime(2026, 11, 27, tzinfo=UTC),
        kind=EventKind.STEP_DONE,
        text="step 1 done",
        data={"sources": [s.model_dump() for s in result.sources]},
    )
    names = PublicNames(Path(dirs["RESEARCH_CORPUS_DIR"]), Path(dirs["RESEARCH_DATA_DIR"]))
    shown = names.model(event).model_dump_json()
    no_paths(shown, never)
    assert "asyncio/tasks.py" in shown


async def test_the_cli_result_of_a_research_never_shows_a_server_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`research` (attached) and `result` print through one function what the client's `result`
    hands them: the research's result as people may see it."""
    from argparse import Namespace

    from settings import settings
    from starter.cli.commands import emit_result
    from starter.client import research_client

    result, never, dirs = hostile_paths(tmp_path)

    class Finished:
        id = "research-herons"

        async def result(self, **_: Any) -> ResearchResult:
            return result

    for name, value in dirs.items():
        monkeypatch.setenv(name, value)
    settings.cache_clear()
    try:
        shown = await research_client.result(Finished(), cfg=settings())  # type: ignore[arg-type]
        for as_json in (False, True):
            emit_result(shown, Namespace(json=as_json, out=None))
            no_paths(capsys.readouterr().out, never)
    finally:
        settings.cache_clear()  # the next test reads its own environment
