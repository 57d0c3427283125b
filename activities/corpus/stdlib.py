"""The default corpus: the interpreter's own documentation, read from source with `ast`.

The language reference topics of `pydoc_data/topics.py` and the docstrings of the public
standard-library modules. No standard-library module is imported (some act on import:
`antigravity` opens a browser, `this` prints a poem); only `pydoc_data`'s empty package is, to
locate `topics.py`.
"""

from __future__ import annotations

import ast
import importlib.util
import os
import re
import sysconfig
from collections.abc import Iterator
from functools import cache
from pathlib import Path

from activities.corpus.documents import Document, Stamp, normalise, stamp_of
from workflows.text import trim

#: Standard-library folders that are not documentation of the library (tests, tools, vendored or
#: installed packages) or, for pydoc_data, are indexed separately as reference topics.
_STDLIB_SKIP_DIRS = frozenset(
    {
        "test",
        "tests",
        "idlelib",
        "lib2to3",
        "ensurepip",
        "site-packages",
        "dist-packages",
        "turtledemo",
        "__pycache__",
        "pydoc_data",
        "lib-dynload",
        "__phello__",
    }
)
#: A module whose docstrings add up to less than this is not worth a search result.
_MIN_MODULE_DOC_CHARS = 120


@cache
def _stdlib_dir() -> Path:
    return Path(sysconfig.get_paths()["stdlib"]).resolve()


@cache
def topics_path() -> Path | None:
    """pydoc_data/topics.py, located without running it (find_spec only imports its empty package)."""
    try:
        spec = importlib.util.find_spec("pydoc_data.topics")
    except (ImportError, ValueError):
        return None
    return Path(spec.origin).resolve() if spec and spec.origin else None


def stdlib_sources() -> Iterator[tuple[str, Stamp]]:
    """topics.py and every public standard-library module file."""
    topics = topics_path()
    if topics is not None and (stamp := stamp_of(topics)):
        yield str(topics), stamp
    root = _stdlib_dir()
    for folder, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(
            d
            for d in dirnames
            if d not in _STDLIB_SKIP_DIRS and not d.startswith(("_", ".")) and "-" not in d
        )
        for name in sorted(filenames):
            if not name.endswith(".py") or (name.startswith("_") and name != "__init__.py"):
                continue
            path = Path(folder, name)
            if (stamp := stamp_of(path)) is not None:
                yield str(path), stamp


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(_stdlib_dir()).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


_UNDERLINE = re.compile(r"^\s*([*=\-~^\"'`#+])\1{2,}\s*$", re.M)


def topic_documents(path: Path) -> list[Document]:
    """The language reference topics of pydoc_data/topics.py, read as a literal with `ast`."""
    tree = ast.parse(path.read_bytes(), filename=str(path))
    topics: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "topics" for t in node.targets
        ):
            topics = ast.literal_eval(node.value)
    base = path.as_uri()
    # Some topics share one text ("else" and "if"): index it once, under the topic it is named for.
    by_text: dict[str, str] = {}
    for topic, text in sorted(topics.items()):
        heading = text.strip().splitlines()[0] if text.strip() else ""
        if text not in by_text or f'"{topic}"' in heading:
            by_text[text] = topic
    documents = []
    for text, topic in sorted(by_text.items(), key=lambda item: item[1]):
        lines = text.strip().splitlines()
        has_heading = len(lines) > 1 and _UNDERLINE.fullmatch(lines[1]) is not None
        heading = lines[0].strip() if has_heading else topic
        body = _UNDERLINE.sub("", text)
        documents.append(
            Document(
                url=f"{base}#{topic}", title=f"Python reference: {heading}", body=normalise(body)
            )
        )
    return documents


def module_documents(path: Path) -> list[Document]:
    """A module's documentation from its source: docstring, then public classes and functions
    with their signatures and docstrings. Modules that say too little are left out."""
    tree = ast.parse(path.read_bytes(), filename=str(path))
    name = _module_name(path)
    exported = _dunder_all(tree)

    def public(item: str) -> bool:
        return item in exported if exported is not None else not item.startswith("_")

    module_doc = ast.get_docstring(tree) or ""
    sections: list[str] = []
    undocumented: list[str] = []
    documented_chars = len(module_doc)
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and public(node.name):
            doc = ast.get_docstring(node)
            if doc:
                sections.append(f"{_kind(node)}{name}.{_signature(node)} — {doc}")
                documented_chars += len(doc)
            else:
                undocumented.append(f"{node.name}()")
        elif isinstance(node, ast.ClassDef) and public(node.name):
            doc = ast.get_docstring(node) or ""
            bases = ", ".join(ast.unparse(b) for b in node.bases)
            parts = [f"class {name}.{node.name}" + (f"({bases})" if bases else "")]
            if doc:
                parts[0] += f" — {doc}"
                documented_chars += len(doc)
            methods = []
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and (
                    not item.name.startswith("_") or item.name == "__init__"
                ):
                    method_doc = ast.get_docstring(item)
                    if method_doc:
                        signature = _signature(item, method=True)
                        parts.append(f"{_kind(item)}{node.name}.{signature} — {method_doc}")
                        documented_chars += len(method_doc)
                    elif item.name != "__init__":
                        methods.append(item.name)
            if methods:
                parts.append(f"Other methods of {node.name}: {', '.join(methods)}.")
            if doc or len(parts) > 1:
                sections.append("\n\n".join(parts))
            else:
                undocumented.append(node.name)
    if documented_chars < _MIN_MODULE_DOC_CHARS:
        return []
    first_line = module_doc.strip().splitlines()[0].strip() if module_doc.strip() else ""
    title = f"Python module `{name}`" + (f": {first_line}" if first_line else "")
    body = [module_doc, *sections]
    if undocumented:
        body.append(f"{name} also defines: {', '.join(undocumented)}.")
    return [Document(url=path.as_uri(), title=trim(title, 200), body=normalise("\n\n".join(body)))]


def _dunder_all(tree: ast.Module) -> set[str] | None:
    """The names in a literal `__all__`, or None when the module does not declare one."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            try:
                return {str(n) for n in ast.literal_eval(node.value)}
            except (ValueError, TypeError, SyntaxError):  # computed, e.g. `base.__all__ + [...]`
                return None
    return None


def _signature(node: ast.FunctionDef | ast.AsyncFunctionDef, method: bool = False) -> str:
    """`gather(*coros_or_futures, return_exceptions=False)`: parameters and defaults, no
    annotations (they make signatures long without helping a search)."""
    args = node.args
    positional = [*args.posonlyargs, *args.args]
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    pairs = list(zip(positional, defaults, strict=False))
    if method and pairs and pairs[0][0].arg in ("self", "cls"):
        pairs = pairs[1:]
    params = [a.arg + (f"={_short(d)}" if d is not None else "") for a, d in pairs]
    if args.vararg:
        params.append(f"*{args.vararg.arg}")
    elif args.kwonlyargs:
        params.append("*")
    for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=False):
        params.append(a.arg + (f"={_short(d)}" if d is not None else ""))
    if args.kwarg:
        params.append(f"**{args.kwarg.arg}")
    return f"{node.name}({', '.join(params)})"


def _kind(node: ast.AST) -> str:
    return "async " if isinstance(node, ast.AsyncFunctionDef) else ""


def _short(expr: ast.expr) -> str:
    text = ast.unparse(expr)
    return text if len(text) <= 40 else "…"
