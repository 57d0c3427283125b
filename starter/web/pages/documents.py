"""The home page's document forms without JavaScript: upload a document (multipart, with the
page's CSRF token in a `csrf` field) and delete one. Each does what `/api/documents` does (the
same `documents` calls, owner and one-line refusals) and sends the browser back to the home page
(303), where the list shows the change; a refusal is the error page with its one line."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, Request
from fastapi.responses import RedirectResponse, Response
from starlette.datastructures import UploadFile

from starter.web import auth, documents
from starter.web.deps import ApiError
from starter.web.page_forms import _cross_site, _error

router = APIRouter(include_in_schema=False)
HOME = "/#documents"


@router.post("/documents")
async def upload(request: Request) -> Response:
    form = await request.form(max_files=1, max_fields=5)
    file = form.get("file")
    fields = {"csrf": str(form.get("csrf", ""))}
    return await _do(
        request,
        fields,
        lambda user, cfg: documents.upload(
            cfg, user, file if isinstance(file, UploadFile) else None
        ),
    )


@router.post("/documents/{document_id}/delete")
async def delete(request: Request, document_id: str) -> Response:
    form = await request.form(max_files=0, max_fields=5)
    fields = {"csrf": str(form.get("csrf", ""))}
    return await _do(request, fields, lambda user, cfg: documents.delete(cfg, user, document_id))


async def _do(request: Request, form: dict[str, str], work: Any) -> Response:
    user = auth.user_from_request(request)
    if user is None:
        return RedirectResponse(f"/signin?next={quote('/', safe='')}", status_code=303)
    refused = _cross_site(request, form)
    if refused:
        return _error(request, user, 403, refused, "/")
    try:
        await work(user, request.app.state.backend.cfg)
    except ApiError as err:
        return _error(request, user, err.status, err.message, "/")
    return RedirectResponse(HOME, status_code=303)
