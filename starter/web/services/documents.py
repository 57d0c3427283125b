"""The user's uploaded documents, for the API (`/api/documents`) and the home page's forms alike:
stored as files per owner (activities/corpus/uploads.py, where the worker's search finds them),
read and written off the event loop. The owner is always the signed-in user (`deps.User`), never
a value of the request."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from starlette.datastructures import UploadFile

from activities.corpus import uploads
from settings import Settings
from starter.client.temporal import one_line
from starter.web.deps import ApiError
from starter.web.models import DocumentItem
from starter.web.services.sources import model_words, sources_words, unavailable_sources


def _root(cfg: Settings) -> Path:
    return uploads.uploads_root(cfg.library.data_dir)


def _item(upload: uploads.Upload) -> DocumentItem:
    return DocumentItem(
        id=upload.id,
        name=upload.name,
        size=upload.size,
        uploaded_at=upload.uploaded_at.strftime("%Y-%m-%dT%H:%M:%SZ"),
    )


async def upload(cfg: Settings, user: str, file: UploadFile | None) -> DocumentItem:
    """Store FILE as USER's document; a one-line 413, 415 or 422 when it is not taken, 507 past
    the user's quota."""
    if file is None or not isinstance(file, UploadFile) or not file.filename:
        raise ApiError(422, f"choose a document to upload: {uploads.ACCEPTED_WORDS}")
    data = await file.read(uploads.UPLOAD_MAX_BYTES + 1)
    try:
        saved = await asyncio.to_thread(
            uploads.save, _root(cfg), user, file.filename, data, quota(cfg)
        )
    except uploads.UploadRefused as err:
        raise ApiError(err.status, str(err)) from None
    return _item(saved)


def quota(cfg: Settings) -> uploads.Quota:
    """What each user's documents may take (UPLOAD_QUOTA_MB, UPLOAD_QUOTA_FILES)."""
    return uploads.Quota(cfg.limits.upload_quota_mb * 1024 * 1024, cfg.limits.upload_quota_files)


async def listed(cfg: Settings, user: str) -> list[DocumentItem]:
    """USER's documents, newest first."""
    return [_item(u) for u in await asyncio.to_thread(uploads.list_uploads, _root(cfg), user)]


async def delete(cfg: Settings, user: str, document_id: str) -> None:
    """Remove USER's document; another user's id is 404, exactly like one that does not exist."""
    if not await asyncio.to_thread(uploads.delete, _root(cfg), user, document_id):
        raise ApiError(404, f"no document with id {document_id[:100]}")


async def home(cfg: Settings, user: str) -> dict[str, Any]:
    """The home page's sources chooser (what each choice searches, as the worker runs), whether a
    model is configured, and USER's documents (their list, or why not)."""
    found: list[DocumentItem] = []
    problem = None
    try:
        found = await listed(cfg, user)
    except OSError as err:
        problem = f"Your documents could not be listed: {one_line(str(err))}"
    return {
        "sources": sources_words(cfg),
        "unavailable": unavailable_sources(cfg),
        "model": model_words(cfg),
        "documents": [{**d.model_dump(), "size_text": _size(d.size)} for d in found],
        "documents_error": problem,
        "accept": ",".join(uploads.ACCEPTED_SUFFIXES),
        "accepted": uploads.ACCEPTED_WORDS,
        "max_mb": uploads.UPLOAD_MAX_BYTES // (1024 * 1024),
    }


def _size(size: int) -> str:
    if size < 1024:
        return f"{size} bytes"
    return f"{size / 1024:.0f} KB" if size < 1024**2 else f"{size / 1024**2:.1f} MB"
