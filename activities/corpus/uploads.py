"""A person's uploaded documents: files under RESEARCH_DATA_DIR/uploads/, a folder per
owner, searched by the `local` provider as a corpus of their own when a research asks for
`documents` or `both` sources.

Layout: `<data dir>/uploads/<owner folder>/<id>/<name>`. The owner folder is a slug of the owner's
name plus a digest of it (two owners never share one, whatever their names); the id is random hex;
the name is the file name as uploaded, cleaned (`clean_name`). Its size and modification time are
what the list shows: nothing else is stored, so there is nothing to keep in step with the files.

Why a corpus per owner rather than one shared index with an owner column: `LocalCorpus` already
indexes a folder incrementally (a file added or deleted is seen within its refresh interval), reads
each file as untrusted in a limited child process, and serves reads from its index only. A folder
per owner reuses all of it unchanged, and another owner's documents sit in another index file that
a search for this owner never opens. The workflow carries only the owner's name to the search
(`SearchInput.owner`), never a document.
"""

from __future__ import annotations

import fcntl
import hashlib
import io
import os
import re
import secrets
import shutil
import time
import unicodedata
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import unquote, urlsplit

#: The largest document taken (one-line 413 beyond); CORPUS_MAX_FILE_BYTES (5 MB by default) must
#: be at least as large for the index to read it.
UPLOAD_MAX_BYTES = 5 * 1024 * 1024
#: The kinds of document taken, by file name suffix (PDF: pypdfium2 and pypdf are dependencies).
TEXT_SUFFIXES = (".md", ".markdown", ".txt", ".html", ".htm")
ACCEPTED_SUFFIXES = (*TEXT_SUFFIXES, ".pdf", ".docx")
ACCEPTED_WORDS = "Markdown (.md), text (.txt), HTML (.html), PDF (.pdf) or Word (.docx)"
#: The longest file name kept (its suffix is kept whole); a name still longer than NAME_MAX_BYTES
#: in UTF-8 (what a file system takes: 120 emoji are 480 bytes) is refused (422).
NAME_MAX_CHARS = 120
NAME_MAX_BYTES = 255
UPLOAD_ID = re.compile(r"[0-9a-f]{12}")
#: A hidden `.part-` file older than this is what an upload that died left behind: removed.
STALE_PART_S = 3600.0


@dataclass(frozen=True)
class Quota:
    """What one owner's documents may take in all (UPLOAD_QUOTA_MB, UPLOAD_QUOTA_FILES)."""

    max_bytes: int
    max_files: int


class UploadRefused(ValueError):
    """A document that is not taken: one line for the person, and the HTTP status that says why."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Upload:
    id: str
    name: str
    size: int
    uploaded_at: datetime


def uploads_root(data_dir: Path) -> Path:
    return Path(data_dir).expanduser().resolve() / "uploads"


def owner_folder(root: Path, owner: str) -> Path:
    """OWNER's folder under ROOT: readable, and distinct for every owner."""
    slug = re.sub(r"[^A-Za-z0-9_-]+", "-", owner).strip("-")[:40] or "owner"
    return root / f"{slug}-{hashlib.sha256(owner.encode()).hexdigest()[:12]}"


def clean_name(name: str) -> str:
    """The file's own name as uploaded, safe to store and show: no folders (`../` or `C:\\`), no
    control or format characters, no leading dots, spaces collapsed, at most NAME_MAX_CHARS."""
    base = re.split(r"[/\\]", name or "")[-1]
    kept = "".join(ch for ch in base if not unicodedata.category(ch).startswith("C"))
    kept = " ".join(kept.split()).lstrip(". ")
    stem, dot, suffix = kept.rpartition(".")
    if dot and len(kept) > NAME_MAX_CHARS:
        kept = stem[: NAME_MAX_CHARS - len(suffix) - 1].rstrip() + "." + suffix
    return kept[:NAME_MAX_CHARS] or "document"


def check(name: str, data: bytes) -> None:
    """`UploadRefused` unless DATA, named NAME (cleaned), is a document the corpus can read."""
    suffix = Path(name).suffix.lower()
    if len(name.encode("utf-8")) > NAME_MAX_BYTES:
        raise UploadRefused(
            422,
            f"the file name is too long ({len(name.encode('utf-8'))} bytes in UTF-8, at most "
            f"{NAME_MAX_BYTES}): rename the file and upload it again",
        )
    if suffix not in ACCEPTED_SUFFIXES:
        raise UploadRefused(415, f"{name} is not a document taken here: upload {ACCEPTED_WORDS}")
    if len(data) > UPLOAD_MAX_BYTES:
        raise UploadRefused(
            413,
            f"{name} is larger than {UPLOAD_MAX_BYTES // (1024 * 1024)} MB: upload a smaller file",
        )
    if not data.strip():
        raise UploadRefused(422, f"{name} is empty")
    if suffix == ".pdf":
        if not data.startswith(b"%PDF-"):
            raise UploadRefused(415, f"{name} is not a PDF file: upload {ACCEPTED_WORDS}")
        return
    if suffix == ".docx":
        if not _is_word(data):
            raise UploadRefused(415, f"{name} is not a Word document: upload {ACCEPTED_WORDS}")
        return
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        raise UploadRefused(
            415, f"{name} is not UTF-8 text: save it as UTF-8, or upload {ACCEPTED_WORDS}"
        ) from None


def _is_word(data: bytes) -> bool:
    """A .docx is a zip holding `word/document.xml` (what activities/corpus/binary.py reads)."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            return "word/document.xml" in archive.namelist()
    except (zipfile.BadZipFile, ValueError):
        return False


def save(root: Path, owner: str, name: str, data: bytes, quota: Quota | None = None) -> Upload:
    """Store DATA as OWNER's document NAME (cleaned and checked first, and within QUOTA:
    `UploadRefused`). Written to a hidden file first (the index skips those), then renamed, so a
    search never reads half of it; a write that fails leaves nothing behind. The owner's folder is
    locked meanwhile (`flock`: every process on the same data folder), so uploads at once cannot
    pass the quota together."""
    name = clean_name(name)
    check(name, data)
    mine = owner_folder(root, owner)
    mine.mkdir(parents=True, exist_ok=True)
    with _locked(mine):
        sweep_partials(mine)
        if quota is not None:
            within_quota(mine, owner, len(data), quota)
        upload_id = secrets.token_hex(6)
        folder = mine / upload_id
        folder.mkdir(exist_ok=False)
        try:
            partial = folder / f".part-{upload_id}"
            partial.write_bytes(data)
            os.replace(partial, folder / name)
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise
    return _upload(folder / name)


def within_quota(mine: Path, owner: str, size: int, quota: Quota) -> None:
    """`UploadRefused` (507) when a document of SIZE bytes would take OWNER past QUOTA."""
    kept = _documents(mine)
    used = sum(path.stat().st_size for path in kept)
    if len(kept) >= quota.max_files:
        raise UploadRefused(
            507, f"you have {len(kept)} documents, the most kept per user: delete some first"
        )
    if used + size > quota.max_bytes:
        mb = 1024 * 1024
        raise UploadRefused(
            507,
            f"your documents would take {(used + size) / mb:.1f} MB, over your "
            f"{quota.max_bytes / mb:.0f} MB: delete some first",
        )


def sweep_partials(mine: Path, older_than_s: float = STALE_PART_S) -> int:
    """Removes what uploads that died left in the owner folder MINE (hidden `.part-` files older
    than OLDER_THAN_S, and the upload folders they leave empty); how many were removed."""
    removed = 0
    cutoff = time.time() - older_than_s
    for folder in mine.iterdir() if mine.is_dir() else ():
        if not (UPLOAD_ID.fullmatch(folder.name) and folder.is_dir()):
            continue
        for path in folder.glob(".part-*"):
            try:
                if path.stat().st_mtime < cutoff:
                    path.unlink()
                    removed += 1
            except OSError:
                continue
        try:
            folder.rmdir()  # only when nothing else is in it
        except OSError:
            pass
    return removed


def sweep_all_partials(root: Path) -> int:
    """`sweep_partials` over every owner's folder, each under its lock (an upload through another
    replica may be under way): the web app does it when it starts."""
    removed = 0
    for mine in root.iterdir() if root.is_dir() else ():
        if mine.is_dir():
            with _locked(mine):
                removed += sweep_partials(mine)
    return removed


@contextmanager
def _locked(mine: Path) -> Iterator[None]:
    with open(mine / ".lock", "a+b") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def list_uploads(root: Path, owner: str) -> list[Upload]:
    """OWNER's documents, newest first."""
    found = [_upload(path) for path in _documents(owner_folder(root, owner))]
    return sorted(found, key=lambda u: (u.uploaded_at, u.id), reverse=True)


def _documents(mine: Path) -> list[Path]:
    """The documents in the owner folder MINE (never a hidden `.part-` file)."""
    if not mine.is_dir():
        return []
    return [
        path
        for folder in mine.iterdir()
        if UPLOAD_ID.fullmatch(folder.name) and folder.is_dir()
        for path in folder.iterdir()
        if path.is_file() and not path.name.startswith(".")
    ]


def delete(root: Path, owner: str, upload_id: str) -> bool:
    """Remove OWNER's document UPLOAD_ID; False when OWNER has none by that id."""
    if not UPLOAD_ID.fullmatch(upload_id):
        return False
    folder = owner_folder(root, owner) / upload_id
    if not folder.is_dir():
        return False
    shutil.rmtree(folder)
    return True


def folder_of_url(root: Path, url: str) -> Path | None:
    """The owner folder a `file://` URL of an uploaded document lies in, or None: what `read_page`
    opens to read a document a search of that owner's uploads found."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return None
    if parts.scheme != "file" or not parts.path:
        return None
    path = Path(unquote(parts.path))
    if ".." in path.parts:
        return None
    try:
        inside = path.relative_to(root)
    except ValueError:
        return None
    return root / inside.parts[0] if len(inside.parts) >= 3 else None


def _upload(path: Path) -> Upload:
    stat = path.stat()
    return Upload(
        id=path.parent.name,
        name=path.name,
        size=stat.st_size,
        uploaded_at=datetime.fromtimestamp(stat.st_mtime, UTC),
    )
