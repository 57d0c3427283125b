"""Reading a file of a corpus folder: as untrusted as a page from the web.

- **Only regular files inside the folder, checked on what is opened.** The scan's view of a file
  may be stale by the time it is read (a file swapped for a symlink, a FIFO dropped in), so the
  file is opened from the folder down, one name at a time with `O_NOFOLLOW` (no symlink is
  followed on the way, whatever was swapped since), `O_NONBLOCK` (opening a FIFO does not wait for
  a writer) and `O_NOCTTY`, and the opened descriptor must be a regular file (`fstat`). A symlink
  to another file of the folder is read as that file; one that leads outside is refused.
- **A byte cap per file** (CORPUS_MAX_FILE_BYTES, default 5 MiB like CRAWL_MAX_BYTES): a larger file
  is refused by its size before anything is read (a 256 MiB sparse file costs nothing), and at
  most one byte more than the cap is ever read.
- **Parsed in an extraction child** (`activities/web/bounded.py`: memory, CPU time and wall time
  limited, killed when over): Markdown, HTML and text too, whose parsers some inputs make
  quadratic, as well as PDF and Word. The worker only reads bytes and gets documents back.
- **Every refusal is a skip with its reason**, one line, and `display_name` shows a path with its
  control characters escaped, so a file name cannot forge a line of `starter index` output.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from pathlib import Path

from activities.corpus.binary import DOCX_SUFFIXES, PDF_SUFFIXES, docx_document, pdf_documents
from activities.corpus.documents import Document, UnreadableDocument, text_document

#: Opening a file of the folder: no symlink followed, no wait on a FIFO, no controlling terminal.
_OPEN_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
_OPEN_FOLDER = os.O_RDONLY | os.O_NOFOLLOW | os.O_DIRECTORY | os.O_CLOEXEC
#: What a name or a reason may not show raw: C0 and C1 controls, DEL, bidi overrides and isolates,
#: line and paragraph separators.
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_READ_CHUNK = 1 << 20


def read_documents(root: Path, path: Path, max_bytes: int) -> list[Document]:
    """The documents a file of the folder `root` holds, parsed in an extraction child."""
    from activities.web.bounded import ExtractionLimit, pool

    data = read_source(root, path, max_bytes)
    try:
        return pool().run_now(documents_of, str(path), data, lane=str(root))  # a lane per folder
    except ExtractionLimit as err:
        raise UnreadableDocument(str(err)) from None


def documents_of(path: str, data: bytes) -> list[Document]:
    """What runs in the child: the file's bytes to its documents, by its suffix."""
    where = Path(path)
    suffix = where.suffix.lower()
    if suffix in PDF_SUFFIXES:
        return pdf_documents(where, data)
    if suffix in DOCX_SUFFIXES:
        return [docx_document(where, data)]
    return [text_document(where, data)]


def read_source(root: Path, path: Path, max_bytes: int) -> bytes:
    """The bytes of `path`, a regular file inside the folder `root` (resolved) of at most
    `max_bytes`; anything else is refused with UnreadableDocument."""
    real = Path(os.path.realpath(path))
    if not real.is_relative_to(root) or real == root:
        raise UnreadableDocument("a link to a file outside the folder")
    try:
        fd = _open_inside(root, real.relative_to(root).parts)
    except OSError as err:
        raise UnreadableDocument(_open_error(err)) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise UnreadableDocument(f"not a regular file ({_kind(info.st_mode)})")
        if info.st_size > max_bytes:
            raise UnreadableDocument(_too_large(info.st_size, max_bytes))
        chunks, size = [], 0
        while size <= max_bytes and (chunk := os.read(fd, min(_READ_CHUNK, max_bytes + 1 - size))):
            chunks.append(chunk)
            size += len(chunk)
        if size > max_bytes:  # it grew since it was opened
            raise UnreadableDocument(_too_large(size, max_bytes))
        return b"".join(chunks)
    finally:
        os.close(fd)


def _open_inside(root: Path, parts: tuple[str, ...]) -> int:
    """A descriptor of root/parts[0]/.../parts[-1], each name opened in the folder before it."""
    folder = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for name in parts[:-1]:
            inner = os.open(name, _OPEN_FOLDER, dir_fd=folder)
            os.close(folder)
            folder = inner
        return os.open(parts[-1], _OPEN_FILE, dir_fd=folder)
    finally:
        os.close(folder)


def _open_error(err: OSError) -> str:
    if err.errno in (errno.ELOOP, errno.ENOTDIR):
        return "a symlink where a file or folder was (changed since the folder was listed)"
    return f"cannot be opened: {err.strerror or err}"


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISDIR, "a folder"),
    ):
        if test(mode):
            return name
    return "not a file"


def _too_large(size: int, max_bytes: int) -> str:
    return f"{size:,} bytes, more than CORPUS_MAX_FILE_BYTES ({max_bytes:,})"


def display_name(path: str, root: Path | None = None) -> str:
    """`path` as a line of output may show it: relative to `root` when inside it, its control
    characters, line separators and bidi overrides escaped (a newline shows as `\\n`)."""
    shown = Path(path)
    if root is not None and shown.is_relative_to(root):
        shown = shown.relative_to(root)
    return one_line(str(shown))


def one_line(text: str) -> str:
    """`text` with what could break or reorder a line escaped as Python would write it."""
    return _UNPRINTABLE.sub(
        lambda found: found.group().encode("unicode_escape").decode("ascii"), text
    )
