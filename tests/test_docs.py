"""The documentation holds together: README.md is a short hub, and docs/ one page per subject.

Every relative link in README.md and docs/*.md leads to a file that exists, and a `#anchor` to a
heading of that page (GitHub's rule: the heading's text in lower case, punctuation but `-` and `_`
dropped, spaces as hyphens, a repeated heading suffixed `-1`, `-2`, ...). Links inside code (fenced
blocks and `spans`) are text, not links.

Prose cannot drift either: every path of the repository that the pages, the docstrings and comments
of the Python sources, and the comments of the build files cite exists, and every section they
cite by name ("README's "Layout"") is a heading of that page (the rules are above
test_cited_paths_exist). Runs in seconds, with nothing but the files: no import of the project.
"""

from __future__ import annotations

import ast
import io
import os
import re
import tokenize
from collections import Counter
from dataclasses import dataclass, replace
from fnmatch import fnmatch
from functools import cache
from pathlib import Path

import pytest

#: The clone's root (as tests/conftest.py has it; not imported, so that this file reads text only).
REPO = Path(__file__).resolve().parent.parent
README = REPO / "README.md"
DOCS = REPO / "docs"
PAGES = [README, *sorted(DOCS.glob("*.md"))]

#: `[text](target)` and `![alt](target)`, with an optional "title"; nested image links give both.
LINK = re.compile(r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*:", re.I)


def prose(text: str, spans: bool = False) -> list[str]:
    """The lines outside fenced code blocks, with inline code spans removed (or, with `spans`, kept
    without their backticks: a heading's slug counts their text)."""
    lines, fence = [], None
    for line in text.splitlines():
        marker = re.match(r"\s*(`{3,}|~{3,})", line)
        if marker and (fence is None or marker.group(1)[0] == fence[0]):
            fence = None if fence else marker.group(1)
            continue
        if fence is None:
            lines.append(re.sub(r"(`+)((?:(?!\1).)+?)\1", r"\2" if spans else "", line))
    return lines


def slug(heading: str) -> str:
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link's text, not its target
    text = re.sub(r"<[^>]+>", "", text).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    seen: Counter[str] = Counter()
    found = set()
    for line in prose(page.read_text(), spans=True):
        if heading := re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line):
            base = slug(heading.group(1))
            found.add(base if not seen[base] else f"{base}-{seen[base]}")
            seen[base] += 1
    return found


def links(page: Path) -> list[str]:
    return [
        target
        for line in prose(page.read_text())
        for target in LINK.findall(line)
        if not SCHEME.match(target)
    ]


def test_the_slugs_are_githubs() -> None:
    assert slug("Following a research: events, `watch`, MCP") == (
        "following-a-research-events-watch-mcp"
    )
    assert slug("Checking a text's citations") == "checking-a-texts-citations"
    assert slug("Langfuse: prompts and tracing") == "langfuse-prompts-and-tracing"
    assert slug("Budgets, language and long reports") == "budgets-language-and-long-reports"


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(REPO)))
def test_every_relative_link_resolves(page: Path) -> None:
    broken = []
    for target in links(page):
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            broken.append(f"{target}: no such file")
        elif anchor and file.suffix == ".md" and anchor not in anchors(file):
            broken.append(f"{target}: no heading #{anchor} in {file.relative_to(REPO)}")
    assert not broken, "\n".join(broken)


def test_the_readme_is_a_short_hub() -> None:
    text = README.read_text()
    assert len(text.splitlines()) < 250, "README.md is a hub: move the detail to a page of docs/"
    first_block = re.search(r"```bash\n(.*?)```", text, re.S)
    assert first_block is not None
    commands = [line.split("#")[0].strip() for line in first_block.group(1).splitlines()]
    assert commands == ["make demo", "make test"], (
        "the first commands stay `make demo`, `make test`"
    )


def test_the_index_lists_every_page() -> None:
    index = DOCS / "README.md"
    listed = {(DOCS / target).resolve() for target in links(index)}
    pages = {page.resolve() for page in DOCS.glob("*.md") if page != index}
    assert pages <= listed, f"not in docs/README.md: {sorted(p.name for p in pages - listed)}"
    readme_links = {(REPO / target.partition("#")[0]).resolve() for target in links(README)}
    assert pages <= readme_links, "the README's map of docs/ misses a page"


# --- Paths and sections cited in prose ---------------------------------------------------------
#
# Prose names the code it talks about (`workflows/standing/changes.py`, starter/web/app.py, `tests/
# starter/web/`), and a move leaves the old name behind. Where prose is: README.md and docs/*.md
# (prose and code blocks), the docstrings and comments of every Python file of the repository, and
# the comments of CONFIG_FILES and CONFIG_GLOBS. What in it may be a path:
#
# - each word of a code span or of a page's code block (`pytest tests/x.py` cites tests/x.py);
# - outside code spans, text of the form dir/name.py (any suffix of SUFFIXES) that does not continue
#   a URL or another path (https://host/tests/x.py is not one).
#
# Which of those are paths of the repository, checked to exist:
#
# - a word with a `/` or ending in a suffix of SUFFIXES whose first component is an entry of the top
#   of the repository as it is now (listed, less what .gitignore ignores: `.data/`, `.venv/` are a
#   run's). So URLs, routes (`/api/research`: absolute), a user's corpus (`guides/setup.md`) and
#   `RESEARCH_DATA_DIR/web-secret` are not; nor is a word with a wildcard or a placeholder (`*`,
#   `<resource>`, `{id}`, `$(m)`, `...`): a pattern, not a path;
# - a path relative to the citing file's folder, when its first component is a folder there
#   (`web/models.py` in starter/__init__.py);
# - a bare `name.py` (not at the top): a file of that name exists somewhere in the repository (so
#   `config.py` is caught once it has moved; `roles.py` passes, it is workflows/roles.py);
# - `../shared/...`: the seeds and data beside the clone, checked when ../shared is there.
#
# A path may end in `:LINE`, `#anchor` (a heading of the page, when it is Markdown), `::test_name`
# (a pytest node: the file defines the test) or `.attribute` (`starter/web/deps.HTTP_STATUS`: the
# module exists and names it). EXAMPLES are the few words that pass these rules and are not ours.
#
# Sections are cited by name: README "Heading", README's "Heading", docs/using.md, "Heading",
# INTERFACE.md "Heading" (../shared's, when it is there), or unquoted (README: Heading): the page has
# that heading, or a paragraph that opens with it in bold (**Heading.**), as ../shared/INTERFACE.md
# names its parts.

SHARED = REPO.parent / "shared"
SUFFIXES = (".py", ".md", ".toml", ".yml", ".yaml", ".json", ".js", ".css", ".html", ".sh", ".txt")
#: Files whose comments are prose too (build, CI and deployment files).
CONFIG_FILES = ("Makefile", "pyproject.toml", "Dockerfile", "docker-compose.yml", ".ci/run")
CONFIG_GLOBS = ("deploy/**/*.yaml", "dynamicconfig/*.yaml")
#: Words that look like paths of the repository and are not, each with the reason.
EXAMPLES: dict[str, str] = {
    "services.py": "DeerFlow's gateway module, which starter/client/research_client.py is shaped like",
    "topics.py": "the standard library's pydoc_data/topics.py, which the default corpus reads",
}

#: What a word in prose may carry around a path: `(tests/x.py)`, `"docs/",`.
PUNCTUATION = "'\"(),;."
SPAN = re.compile(r"(`+)((?:(?!\1)[^`])+?)\1", re.S)
BARE_PATH = re.compile(
    r"(?<![\w./:~<{@$\\-])((?:\.\./)?(?:[\w.-]+/)+[\w.-]*\w\.(?:py|md|toml|ya?ml|json|js|css|html|sh|txt)"
    r"(?:#[\w-]+|::\w+|:\d+)?)(?![\w/-])"
)
SECTION = re.compile(
    r"(?P<page>\bREADME(?:\.md)?|(?<![\w/])(?:\.\./)?[\w./-]*\w\.md)`?(?:'s)?,?\s+\(?(?:section\s+)?"
    r"[\"“](?P<title>[^\"”\n]+(?:\n[^\"”\n]+)?)[\"”]"
)
#: The same without quotes (README: Performance): a capitalised title up to a bracket or a stop,
#: and the next line, which may go on with it; some run of its first words must be the section.
SECTION_BARE = re.compile(
    r"(?P<page>\bREADME(?:\.md)?|(?<![\w/])(?:\.\./)?[\w./-]*\w\.md)(?:'s)?[:,]\s+(?:section\s+)?"
    r"(?P<title>[A-Z][^()\n.;:\"“”]*)(?P<more>\n[^()\n.;:\"“”]*)?"
)


def _ignore_patterns() -> list[str]:
    lines = (REPO / ".gitignore").read_text().splitlines()
    return [p.strip().strip("/") for p in lines if p.strip() and not p.startswith("#")]


#: Besides .gitignore's: git's own folder and the tools' caches (.mypy_cache, .ruff_cache).
IGNORED = [*_ignore_patterns(), ".git", "node_modules", ".*_cache"]


def ignored(name: str) -> bool:
    return any(fnmatch(name, pattern) for pattern in IGNORED)


def tree(*roots: Path) -> list[Path]:
    """Every file under `roots`, less what .gitignore leaves out (runs' data, caches, node_modules)."""
    found = []
    for root in roots:
        if root.is_file():
            found.append(root)
            continue
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if not ignored(d))
            found += [Path(dirpath, f) for f in sorted(filenames) if not ignored(f)]
    return found


TOP = {entry.name for entry in REPO.iterdir() if not ignored(entry.name)}


@dataclass(frozen=True)
class Passage:
    """Prose in a file: a page (its lines outside code blocks), a docstring or a run of comments."""

    file: Path
    line: int
    text: str
    #: A page's code blocks: every word that may be a path is one (`pytest tests/x.py`).
    code: bool = False

    def where(self, offset: int) -> str:
        return f"{self.file.relative_to(REPO)}:{self.line + self.text.count(chr(10), 0, offset)}"


def page_passages(page: Path) -> list[Passage]:
    """The page's prose, with its link targets dropped (the links are
    test_every_relative_link_resolves's), and its code blocks, each with the other's lines blank
    so that line numbers hold."""
    prose_lines, code_lines, fence = [], [], None
    for line in page.read_text().splitlines():
        marker = re.match(r"\s*(`{3,}|~{3,})", line)
        if marker and (fence is None or marker.group(1)[0] == fence[0]):
            fence = None if fence else marker.group(1)
            line = ""
        prose_lines.append("" if fence else re.sub(r"\]\([^)]*\)", "]", line))
        code_lines.append(line if fence else "")
    return [
        Passage(page, 1, "\n".join(prose_lines)),
        Passage(page, 1, "\n".join(code_lines), code=True),
    ]


def python_passages(file: Path) -> list[Passage]:
    """Docstrings (a string statement anywhere: modules', classes', functions', attributes') and
    comments, consecutive comment lines as one passage."""
    source = file.read_text()
    found = [
        Passage(file, node.lineno, node.value.value)
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    ]
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    comments = [(t.start[0], t.string) for t in tokens if t.type == tokenize.COMMENT]
    return found + comment_passages(file, comments)


def config_passages(file: Path) -> list[Passage]:
    """The comments of a Makefile, TOML, YAML, Dockerfile or shell script: `#` at the start of a
    line or after a space."""
    comments = []
    for number, line in enumerate(file.read_text().splitlines(), 1):
        if found := re.search(r"(?:^|\s)(#.*)$", line):
            comments.append((number, found.group(1)))
    return comment_passages(file, comments)


def comment_passages(file: Path, comments: list[tuple[int, str]]) -> list[Passage]:
    passages: list[Passage] = []
    for number, comment in comments:
        text = re.sub(r"^#+:?!?\s?", "", comment)
        last = passages[-1] if passages else None
        if last and last.line + last.text.count("\n") == number - 1:
            passages[-1] = Passage(file, last.line, f"{last.text}\n{text}")
        else:
            passages.append(Passage(file, number, text))
    return passages


@cache
def passages() -> tuple[Passage, ...]:
    """Every passage of prose in the repository: the pages, the Python sources' docstrings and
    comments (this file's own examples left out) and the comments of CONFIG_FILES."""
    found = [passage for page in PAGES for passage in page_passages(page)]
    sources = [
        REPO / name for name in TOP if (REPO / name).is_dir() and name not in {"docs", "deploy"}
    ]
    sources += [REPO / name for name in TOP if name.endswith(".py")]
    for file in tree(*sources):
        if file.suffix == ".py" and file != Path(__file__):  # this file's examples are examples
            found += python_passages(file)
    configs = [REPO / name for name in CONFIG_FILES if (REPO / name).exists()]
    configs += [file for pattern in CONFIG_GLOBS for file in sorted(REPO.glob(pattern))]
    for file in configs:
        found += config_passages(file)
    return tuple(found)


def cited_paths(passage: Passage) -> list[tuple[int, str]]:
    """(offset, word) for every word of the passage that may be a path: each word of a code span,
    and path-like text outside them."""
    if passage.code:
        return [
            (w.start(), w.group().strip(PUNCTUATION)) for w in re.finditer(r"\S+", passage.text)
        ]
    found = []
    for span in SPAN.finditer(passage.text):
        for word in re.finditer(r"\S+", span.group(2)):
            found.append((span.start(2) + word.start(), word.group().strip(PUNCTUATION)))
    bare = SPAN.sub(lambda m: " " * len(m.group()), passage.text)
    found += [(m.start(1), m.group(1)) for m in BARE_PATH.finditer(bare)]
    return found


@cache
def file_names() -> frozenset[str]:
    return frozenset(file.name for file in tree(*(REPO / name for name in TOP)))


def stale(word: str, beside: Path = REPO) -> str | None:
    """Why `word` names no path of the repository (or of ../shared), or None: it is one, or not a
    path at all. A path may also be relative to `beside`, the folder of the file that cites it
    (`web/models.py` in starter/__init__.py), when its first component is there."""
    word = word.strip(PUNCTUATION).split("=")[-1]
    if word in EXAMPLES:
        return None
    path, test, anchor = word, "", ""
    if "::" in path:
        path, _, test = path.partition("::")
    path, _, anchor = path.partition("#")
    path = re.sub(r":\d+(?:-\d+)?$", "", path).removeprefix("./")
    if (
        not path
        or path.startswith("/")
        or ":" in path
        or re.search(r"[*?\[\]{}<>$~…%]|\.\.\.", path)
    ):
        return None
    if "/" not in path and not path.endswith(SUFFIXES):
        return None
    if path.startswith("../shared/") or path == "../shared":
        base = REPO
        if not SHARED.exists():
            return None  # test_cited_shared_paths_exist says it was not checked
    elif "/" not in path and path.endswith(".py") and path not in TOP:
        return None if path in file_names() else "no file of that name in the repository"
    elif path.split("/")[0] in TOP:
        base = REPO
    elif "/" in path and beside != REPO and (beside / path.split("/")[0]).is_dir():
        base = beside
    else:
        return None
    file = base / path
    if not file.exists():
        module, _, attribute = path.rpartition(".")
        owner = base / f"{module}.py"
        if module and "/" not in attribute and owner.is_file():
            if re.search(rf"\b{re.escape(attribute)}\b", owner.read_text()):
                return None
            return f"{owner.relative_to(base)} names no {attribute}"
        return "no such file or directory"
    if path.endswith("/") and not file.is_dir():
        return "not a directory"
    if test and not re.search(rf"def {re.escape(test)}\b", file.read_text()):
        return f"no test {test} in it"
    if anchor and file.suffix == ".md" and anchor not in anchors(file):
        return f"no heading #{anchor} in it"
    return None


def sections(page: Path) -> set[str]:
    """The slugs of the page's headings and of its paragraphs' bold openings (**What changed.**)."""
    leads = re.findall(r"^\*\*([^*]+?)[.:]?\*\*", page.read_text(), re.M)
    return anchors(page) | {slug(lead) for lead in leads}


def cited_page(name: str, passage: Passage) -> Path | None:
    if name in {"README", "README.md"}:
        return README
    candidates = [REPO / name, passage.file.parent / name]
    if SHARED.exists():
        candidates += [SHARED.parent / name, SHARED / name]
    return next((c.resolve() for c in candidates if c.is_file()), None)


def stale_citations(shared: bool) -> list[str]:
    """`file:line: path - why` for every stale path prose cites, into ../shared or not."""
    return sorted(
        {
            f"{passage.where(offset)}: {word} - {why}"
            for passage in passages()
            for offset, word in cited_paths(passage)
            if word.startswith("../shared") == shared and (why := stale(word, passage.file.parent))
        }
    )


def test_cited_paths_exist() -> None:
    """Every path of the repository that prose cites exists; the message lists each that does not,
    with its file and line, so that all can be fixed in one pass."""
    problems = stale_citations(shared=False)
    assert not problems, f"{len(problems)} stale paths in prose:\n" + "\n".join(problems)


def test_cited_shared_paths_exist() -> None:
    """The same for the paths into ../shared (the seeds and the data beside the clone)."""
    if not SHARED.exists():
        pytest.skip("need ../shared (not in this clone): the paths prose cites in it not checked")
    problems = stale_citations(shared=True)
    assert not problems, f"{len(problems)} stale paths into ../shared:\n" + "\n".join(problems)


def stale_sections(passage: Passage) -> list[str]:
    problems = []
    passage = replace(passage, text=passage.text.replace("`", ""))
    for found in SECTION.finditer(passage.text):
        name, title = found.group("page"), " ".join(found.group("title").split())
        page, where = cited_page(name, passage), passage.where(found.start())
        if page is None:
            if SHARED.exists() or name.split("/")[0] in TOP:  # else: maybe one of ../shared's
                problems.append(f'{where}: {name} "{title}" - no such page')
        elif slug(title) not in sections(page):
            problems.append(f'{where}: {name} "{title}" - no such section')
    for found in SECTION_BARE.finditer(passage.text):
        name, words = found.group("page"), f"{found.group('title')}{found.group('more') or ''}"
        words = words.split()
        page, where = cited_page(name, passage), passage.where(found.start())
        runs = {slug(" ".join(words[:n])) for n in range(1, len(words) + 1)}
        if page is not None and not runs & sections(page):  # a page not found: not ours
            problems.append(f"{where}: {name}: {found.group('title').strip()} - no such section")
    return problems


def test_cited_sections_exist() -> None:
    """README "Heading", docs/using.md, "Heading", INTERFACE.md "Heading": the page has it."""
    problems = sorted(
        p for passage in passages() if not passage.code for p in stale_sections(passage)
    )
    assert not problems, f"{len(problems)} stale section references:\n" + "\n".join(problems)


def test_what_counts_as_a_path() -> None:
    for word in [
        "https://example.org/tests/x.py",
        "file:///srv/docs/notes.md",
        "/api/research",
        "guides/setup.md",
        "tests/**/*.py",
        "starter/web/api/<resource>.py",
        "RESEARCH_DATA_DIR/web-secret",
        ".data/research.sqlite",
        "host:8000/x",
    ]:
        assert stale(word) is None, word
    assert stale("tests/no_such_module.py") == "no such file or directory"
    assert stale("tests/test_docs.py:12") is None
    assert stale("tests/test_docs.py::test_cited_paths_exist") is None
    assert stale("tests/test_docs.py::test_nothing") == "no test test_nothing in it"
    assert stale("README.md#no-such-heading") == "no heading #no-such-heading in it"
    assert stale("docs/") is None
    assert stale("no_such_module_anywhere.py") == "no file of that name in the repository"
    bare = Passage(REPO / "x.py", 1, "see tests/test_docs.py and `docs/` (not https://h/a/b.py)")
    assert [word for _, word in cited_paths(bare)] == ["docs/", "tests/test_docs.py"]
    assert stale("README.md#the-state-machine") is None
    assert stale("starter/web/deps.HTTP_STATUS") is None
    assert stale("starter/web/deps.NO_SUCH_NAME") == "starter/web/deps.py names no NO_SUCH_NAME"
    assert stale("web/deps.py", beside=REPO / "starter") is None
    assert stale("web/no_such.py", beside=REPO / "starter") == "no such file or directory"
    assert stale("no_such_folder/x.py", beside=REPO / "starter") is None  # not ours
    assert stale("docs/figures/models-$(m).md") is None
    assert stale("(tests/test_docs.py),") is None
    cited = Passage(
        REPO / "x.py",
        1,
        'README "No such heading"; the README\'s "The web app"; docs/web-app.md, "Behind a\n'
        'reverse proxy"; `docs/web-app.md`\'s "Limits"; docs/nowhere.md, "X"; a "quote";\n'
        "README: Performance (docs/web-app.md: Limits); README, The web app\nand more; user.md: X",
    )
    assert stale_sections(cited) == [
        'x.py:1: README "No such heading" - no such section',
        'x.py:2: docs/nowhere.md "X" - no such page',
        "x.py:3: README: Performance - no such section",
    ]
