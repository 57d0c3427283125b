"""`research --sources`: a research that searches only your documents cites the document
you uploaded (the real worker process, offline engine); `web` with no web provider configured is
refused in one line before anything starts; a value that is not a source is a usage error."""

from __future__ import annotations

import json
from pathlib import Path

from activities.corpus import uploads
from tests.e2e.test_end_to_end import Workers
from tests.starter.cli.test_starter import starter

QUESTION = "How many quokkas did the Rottnest census of 2026 count?"


def _env(subprocess_env: dict[str, str], tmp_path: Path) -> dict[str, str]:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "bread.md").write_text("# Bread\n\nA sourdough starter is fed flour and water.\n")
    return {
        **subprocess_env,
        "RESEARCH_CORPUS_DIR": str(corpus),
        "RESEARCH_DATA_DIR": str(tmp_path / "data"),
    }


async def test_research_with_sources_documents_cites_your_uploaded_document(
    subprocess_env: dict[str, str], tmp_path: Path
) -> None:
    env = _env(subprocess_env, tmp_path)
    uploads.save(
        uploads.uploads_root(tmp_path / "data"),
        "local",  # RESEARCH_USER's, whose research the CLI starts
        "quokka-census.md",
        b"# Rottnest quokka census\n\nThe Rottnest census of 2026 counted 12,000 quokkas on the island.\n",
    )
    workers = Workers(env)
    workers.start()
    try:
        run = await starter(
            "research", QUESTION, "--sources", "documents", "--depth", "light",
            "--max-clarifications", "0", "--json", env=env, timeout=120,
        )  # fmt: skip
    finally:
        workers.stop_all()

    assert run.code == 0, run.err
    result = json.loads(run.out)
    cited = {s["title"]: s["url"] for s in result["sources"]}
    assert "Rottnest quokka census" in cited, result["sources"]
    # the upload by its file name, never the data folder or the owner's folder
    assert cited["Rottnest quokka census"] == "quokka-census.md"
    assert "12,000 quokkas" in result["report_markdown"]


async def test_sources_web_without_a_web_provider_is_refused_in_one_line(
    subprocess_env: dict[str, str], tmp_path: Path
) -> None:
    env = _env(subprocess_env, tmp_path)  # SEARCH_PROVIDER=local only

    run = await starter("research", QUESTION, "--sources", "web", "--detach", env=env)

    assert run.code == 2
    [line] = run.err.strip().splitlines()
    assert "--sources web: no web search provider is configured (SEARCH_PROVIDER=local)" in line
    assert run.out == ""


async def test_a_source_that_does_not_exist_is_a_usage_error(
    subprocess_env: dict[str, str], tmp_path: Path
) -> None:
    run = await starter(
        "research", QUESTION, "--sources", "everywhere", "--detach", env=subprocess_env
    )

    assert run.code == 2
    assert "--sources: invalid choice: 'everywhere'" in run.err
