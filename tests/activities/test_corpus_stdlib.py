"""The default corpus of the `local` provider: the documentation that ships with this Python
interpreter, read from source (language reference topics and standard-library docstrings), built
without importing any documented module.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from activities.corpus import LocalCorpus
from tests.conftest import REPO
from workflows.models import SNIPPET_LIMIT


@pytest.fixture(scope="module")
def python_docs(tmp_path_factory: pytest.TempPathFactory) -> tuple[LocalCorpus, dict]:
    """Built once, in a fresh interpreter that reports which modules the build imported; the
    tests then use the same index from this process (which must find nothing left to do)."""
    index_dir = tmp_path_factory.mktemp("python-docs-index")
    script = textwrap.dedent(
        """
        import json, sys
        from pathlib import Path
        from activities.corpus import LocalCorpus
        before = set(sys.modules)
        corpus = LocalCorpus(None, Path(sys.argv[1]))
        description = corpus.description
        print(json.dumps({
            "description": description,
            "build_seconds": corpus.build_seconds,
            "imported": sorted(set(sys.modules) - before),
        }))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(index_dir)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    report = json.loads(done.stdout)
    print(f"default corpus: {report['description']} built in {report['build_seconds']:.2f}s")
    return LocalCorpus(None, index_dir), report


def test_building_the_python_docs_imports_none_of_the_documented_modules(python_docs) -> None:
    corpus, report = python_docs

    assert "antigravity" not in report["imported"] and "this" not in report["imported"]
    assert set(report["imported"]) <= {"pydoc_data"}  # only the (empty) package of topics.py
    assert report["build_seconds"] < 60
    assert corpus.description == report["description"]
    assert corpus.build_seconds is None  # the index another process built is used as it is


def test_python_docs_describe_themselves(python_docs) -> None:
    corpus, _ = python_docs
    major, minor = sys.version_info[:2]

    description = corpus.description
    assert description.startswith(f"Python {major}.{minor} documentation (")
    assert int(description.split("(")[1].split()[0]) > 200


def test_python_docs_answer_an_asyncio_question(python_docs) -> None:
    corpus, _ = python_docs

    hits = corpus.search("asyncio gather tasks concurrently")

    top = hits[0]
    assert top.url.endswith("/asyncio/tasks.py") and top.url.startswith("file://")
    assert top.title.startswith("Python module `asyncio.tasks`")
    assert "gather" in top.snippet and len(top.snippet) <= SNIPPET_LIMIT
    page = corpus.read(top.url, "gather return_exceptions cancel", 1500)
    assert page is not None and len(page.text) <= 1500
    assert "gather(*coros_or_futures, return_exceptions=False)" in page.text


def test_python_docs_answer_a_language_reference_question(python_docs) -> None:
    corpus, _ = python_docs
    import pydoc_data.topics

    hits = corpus.search("assert statement")

    assert hits[0].url == Path(pydoc_data.topics.__file__).as_uri() + "#assert"
    assert hits[0].title == 'Python reference: The "assert" statement'
    page = corpus.read(hits[0].url, "assert debugging __debug__", 800)
    assert page is not None and page.title == hits[0].title
    assert "__debug__" in page.text and len(page.text) <= 800
    assert "****" not in page.text  # reST underlines are not text
    assert (
        corpus.read(Path(pydoc_data.topics.__file__).as_uri() + "#no-such-topic", "x", 500) is None
    )


def test_python_docs_serve_only_indexed_documents(python_docs) -> None:
    corpus, _ = python_docs
    stdlib = Path(os.__file__).resolve().parent

    assert (
        corpus.read((stdlib / "this.py").as_uri(), "zen", 500) is None
    )  # no docstrings: not indexed
    assert corpus.read((stdlib / "test" / "__init__.py").as_uri(), "tests", 500) is None
    assert corpus.read("file:///etc/passwd", "root", 500) is None
    assert corpus.read((stdlib / "json" / "__init__.py").as_uri(), "loads", 500) is not None
