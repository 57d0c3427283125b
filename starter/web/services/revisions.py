"""Revising one section from the web app: the call the API and the page's form share
(`revise_section`), and the report as the research page shows it section by section
(`report_sections`): each numbered section followed by its **Revise this section** form, a
revised one marked "revised" with a link to the version before it.

The sections are the ones workflows/kit/sections.py numbers, found in the report as the page
renders it (its title and Sources list taken out first, which changes no number). The report is
rendered once, whole, as before (so headings sit at the same levels and citations link alike);
an inert marker paragraph between the sections is where it is cut into pieces.
"""

from __future__ import annotations

import secrets
from typing import Any

from markupsafe import Markup

from starter.client import revisions
from starter.client.errors import ClientError
from starter.exports.markup import without_sources_list
from starter.web.deps import RPC_TIMEOUT, ApiError, Backend, Research
from starter.web.pages.frame import PageError
from starter.web.presentation.render import render_markdown, without_title
from workflows.kit.sections import MARKER, sections
from workflows.models import ResearchResult, Stage
from workflows.revising_messages import ReportVersion, RevisionOutcome

#: How long the API and the form wait for the new version before answering.
WAIT_S = 120.0


async def revise_section(
    research: Research, app: Backend, section: object, feedback: object
) -> RevisionOutcome:
    """Revise SECTION of RESEARCH (the user's own: `deps.owned_research`) with FEEDBACK."""
    if research.running:
        raise ApiError(
            422,
            f"research {research.id} is still running: a section can be revised once its "
            "report is finished",
        )
    try:
        return await revisions.revise(
            app.session,
            research.id,
            section,
            feedback,
            owner=research.owner,
            wait_s=WAIT_S,
            rpc_timeout=RPC_TIMEOUT,
        )
    except ClientError as err:
        raise ApiError.of(err) from None


def version_asked(text: str) -> int | None:
    """The page's `?version=N` (empty: the latest); anything but a whole number from 1 is a
    one-line error page."""
    if not text.strip():
        return None
    if not text.strip().isdigit() or int(text) < 1:
        raise PageError(422, f"invalid version {text[:40]!r}: a version's number, from 1")
    return int(text)


def report_sections(
    research_id: str,
    result: ResearchResult,
    version: int | None,
    versions: list[ReportVersion],
) -> dict[str, Any]:
    """The page's report in pieces (`pieces`: each piece's HTML and the section it ends, if
    any), whether its sections may be revised here (the latest version of a finished report),
    and which version this is."""
    latest = versions[-1].version if versions else 1
    shown = version or latest
    markdown = without_title(without_sources_list(result.report_markdown), result.query)
    found = sections(markdown)
    if not found:
        return {}
    nonce = secrets.token_hex(8)
    cut, checked = markdown, {}
    for s in reversed(found):  # the page says "revised" in its own line: the marker goes
        marker = MARKER.search(cut, s.body_start, s.end)
        end = s.end
        if marker is not None:
            checked[s.number] = marker.group(0).strip("* ").split(": ", 1)[-1]
            cut = cut[: marker.start()] + cut[marker.end() :]
            end -= marker.end() - marker.start()
        cut = cut[:end] + f"\n\nSECTIONEND{s.number}X{nonce}\n\n" + cut[end:]
    html = str(render_markdown(cut, {s.id: s.url for s in result.sources}))
    revised = revisions.revised_sections(versions, shown)
    pieces: list[dict[str, Any]] = []
    for s in found:
        before, _, html = html.partition(f"<p>SECTIONEND{s.number}X{nonce}</p>")
        by = revised.get(s.number)
        pieces.append(
            {
                "html": Markup(before),
                "number": s.number,
                "heading": s.heading,
                "revised_in": by,
                "earlier": by - 1 if by else None,
                "checked": checked.get(s.number, ""),
            }
        )
    pieces.append({"html": Markup(html), "number": None})
    return {
        "pieces": pieces,
        "version": shown,
        "latest_version": latest,
        "revisable": shown == latest and result.outcome in (Stage.COMPLETED, Stage.CANCELLED),
    }
