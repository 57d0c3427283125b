"""The home page's document forms without JavaScript: upload a document (multipart, with the
page's CSRF token in a `csrf` field) and delete one. Each does what `/api/documents` does (the
same `documents` calls, owner and one-line refusals) and sends the browser back to the home page
(303), where the list shows the change; a refusal is the error page with its one line."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response
from starlette.datastructures import UploadFile

from starter.web.deps import Backend
from starter.web.pages.forms import act
from starter.web.services import documents

router = APIRouter(include_in_schema=False)
HOME = "/#documents"


@router.post("/documents")
async def upload(request: Request) -> Response:
    form = await request.form(max_files=1, max_fields=5)
    file = form.get("file")
    fields = {"csrf": str(form.get("csrf", ""))}
    upload = file if isinstance(file, UploadFile) else None

    async def add(user: str, app: Backend) -> str:
        await documents.upload(app.cfg, user, upload)
        return HOME

    return await act(request, fields, "/", add)


@router.post("/documents/{document_id}/delete")
async def delete(request: Request, document_id: str) -> Response:
    form = await request.form(max_files=0, max_fields=5)
    fields = {"csrf": str(form.get("csrf", ""))}

    async def remove(user: str, app: Backend) -> str:
        await documents.delete(app.cfg, user, document_id)
        return HOME

    return await act(
        request,
        {**fields, "confirmed": str(form.get("confirmed", ""))},
        "/",
        remove,
        confirm="Delete this document? Research will no longer search it.",
    )
