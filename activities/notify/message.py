"""What every notification channel sends: the event as a JSON body (INTERFACE.md's fields) with
a one-line `text` for a person, the same bytes on every attempt (`at` was fixed by the workflow);
receivers.py signs it."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

from settings import Settings
from storage import store
from storage.public_names import PublicNames
from workflows.kit.citations import cited_ids
from workflows.standing_messages import Notice, NoticeKind


def page_url(cfg: Settings, notice: Notice) -> str:
    return f"{cfg.notify.public_url.rstrip('/')}/research/{quote(notice.research_id, safe='')}"


def summary(notice: Notice, url: str) -> str:
    """One line for a person (Slack's `text`, the email's subject line with the link)."""
    question = " ".join(notice.question.split())
    if len(question) > 120:
        question = question[:119] + "…"
    what = {
        NoticeKind.COMPLETED: "Research completed",
        NoticeKind.CANCELLED: "Research cancelled (its report keeps what it had found)",
        NoticeKind.FAILED: "Research failed",
        NoticeKind.WAITING: f"Research waits for you ({(notice.waiting_for or '').replace('_', ' ')})",
        NoticeKind.CHANGED: "Standing research found changes",
    }[notice.event]
    line = f"{what}: {question} — {url}"
    if notice.event is NoticeKind.CHANGED and notice.changes is not None:
        c = notice.changes
        line += (
            f" ({len(c.new_sources)} new sources, {len(c.gone_sources)} gone, "
            f"{len(c.updated_sources)} updated, {len(c.new_claims)} new findings, "
            f"{len(c.dropped_claims)} no longer made, {len(c.changed_findings)} changed)"
        )
    return line


#: The most of a report's summary a notice quotes.
FOUND_CHARS = 600


def found(cfg: Settings, notice: Notice) -> str | None:
    """What a finished research found, for a person reading its notice: the opening of its
    report's summary, its sources read and cited, its claims supported. Read from the library
    (the research was saved before it announced its end); None when it cannot be read."""
    if notice.event not in (NoticeKind.COMPLETED, NoticeKind.CANCELLED):
        return None
    try:
        stored = store.load_research(cfg.library.db_url, notice.research_id)
    except Exception:  # noqa: BLE001 - a notice goes out without it rather than not at all
        return None
    if stored is None:
        return None
    result = stored.result
    cited = set(cited_ids(result.report_markdown))
    lines = [_opening(result.report_markdown)]
    lines.append(f"Sources: {len(result.sources)} read, {len(cited)} cited in the report.")
    checked = result.verification
    if checked is not None and checked.enabled and checked.claims:
        lines.append(f"Claims: {checked.supported} of {checked.claims} supported by their sources.")
    return "\n".join(line for line in lines if line)


def _opening(report: str) -> str:
    """The report's first paragraph of prose (its summary), clipped."""
    for block in report.split("\n\n"):
        text = " ".join(block.split())
        if text and not text.startswith(("#", ">", "- [", "|", "*This report", "```")):
            return text if len(text) <= FOUND_CHARS else text[: FOUND_CHARS - 1] + "…"
    return ""


def body(cfg: Settings, notice: Notice) -> dict[str, Any]:
    """The event as receivers get it: INTERFACE.md's `{event, id, owner, question, url, at, ...}`."""
    url = page_url(cfg, notice)
    data: dict[str, Any] = {
        "event": notice.event.value,
        "id": notice.research_id,
        "owner": notice.owner,
        "question": notice.question,
        "url": url,
        "at": notice.at.isoformat(),
        "text": summary(notice, url),
    }
    if notice.standing_id:
        data["standing_id"] = notice.standing_id
    for key in ("waiting_for", "pending", "outcome", "error"):
        if getattr(notice, key):
            data[key] = getattr(notice, key)
    if notice.changes is not None:
        data["changes"] = notice.changes.model_dump(mode="json")
    return PublicNames.of(cfg).data(data)  # local sources by name: receivers are not the server


def encoded(data: dict[str, Any]) -> bytes:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), sort_keys=True).encode()
