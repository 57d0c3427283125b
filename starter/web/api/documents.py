"""`/api/documents`: the user's own documents, which a research with `sources` `documents` or
`both` searches beside the local corpus. Upload (multipart, one `file`), list, delete."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, File, Response, UploadFile

from activities.corpus.uploads import ACCEPTED_WORDS, UPLOAD_MAX_BYTES
from starter.web.deps import App, User
from starter.web.models import DocumentItem
from starter.web.services import documents

router = APIRouter(tags=["documents"])


@router.post("/documents", status_code=201, response_model=DocumentItem)
async def upload_document(
    user: User,
    app: App,
    file: Annotated[
        UploadFile,
        File(
            description=f"{ACCEPTED_WORDS}, at most {UPLOAD_MAX_BYTES // (1024 * 1024)} MB",
        ),
    ],
) -> DocumentItem:
    """The document, stored as the user's: 201 `{id, name, size, uploaded_at}`; 413 too large,
    415 not a kind of document taken, 422 no file, an empty one or a name too long, 507 past the
    user's quota (UPLOAD_QUOTA_MB, UPLOAD_QUOTA_FILES)."""
    return await documents.upload(app.cfg, user, file)


@router.get("/documents", response_model=list[DocumentItem])
async def list_documents(user: User, app: App) -> list[DocumentItem]:
    """The user's documents, newest first (another user's are never listed)."""
    return await documents.listed(app.cfg, user)


@router.delete("/documents/{id}", status_code=204)
async def delete_document(id: str, user: User, app: App) -> Response:  # noqa: A002
    """Removes the user's document: the next search no longer finds it; another user's is 404."""
    await documents.delete(app.cfg, user, id)
    return Response(status_code=204)
