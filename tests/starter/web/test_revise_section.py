"""One section revised from the web app: `POST
/api/research/{id}/sections/{n}/revise`, the research page's **Revise this section** form without
JavaScript, "revised" with a link to the earlier version, `?version=N`, owners and refusals.

A real web app on a loopback port, the Temporal dev server, a worker running the real
`ReviseSectionWorkflow` with the offline engine's section writer and the real library store, and a
research stored in the library as alice's (Temporal never knew it: a revision needs only the
library).
"""

from __future__ import annotations

import asyncio
import html
import re
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
import pytest_asyncio
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from activities.engine import method
from activities.offline_engine import OfflineEngine
from starter.web.identity import auth
from storage import revisions
from tests.starter.web.conftest import (
    TOKENS,
    WebServer,
    WebWorker,
    csrf_for,
    directed_script,
    one_line_error,
    running_app,
    session_cookie,
    start,
    web_config,
)
from tests.starter.web.reports import showcase_result, store_research
from workflows import roles
from workflows.kit.sections import sections
from workflows.research import DeepResearchWorkflow
from workflows.revising.workflow import ReviseSectionWorkflow


@pytest_asyncio.fixture(scope="module")
async def revise_worker(
    dev_env: WorkflowEnvironment, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[WebWorker]:
    folder = tmp_path_factory.mktemp("revise")
    db_url = f"sqlite:///{folder / 'library.sqlite'}"
    task_queue = f"revise-{uuid.uuid4().hex[:8]}"
    script = directed_script(db_url)
    script.behaviour["write_section"] = method(OfflineEngine(), roles.WRITE_SECTION)

    async def save_revision(record: Any) -> Any:
        return await asyncio.to_thread(revisions.write, record, db_url)

    script.behaviour["save_revision"] = save_revision
    async with Worker(
        dev_env.client,
        task_queue=task_queue,
        workflows=[DeepResearchWorkflow, ReviseSectionWorkflow],
        activities=script.activities(),
    ):
        yield WebWorker(
            task_queue=task_queue,
            script=script,
            db_url=db_url,
            address=dev_env.client.service_client.config.target_host,
        )


@pytest.fixture(scope="module")
def server(revise_worker: WebWorker) -> Iterator[WebServer]:
    with running_app(web_config(revise_worker, TOKENS), TOKENS) as app:
        yield app


def alices(worker: WebWorker) -> str:
    return store_research(
        worker.db_url, showcase_result().model_copy(update={"owner": "alice"}), "revise"
    )


def browser(server: WebServer, user: str) -> tuple[httpx.AsyncClient, str]:
    """A signed-in page session (no JavaScript: plain GETs and form posts) and its CSRF token."""
    cookie = session_cookie(server, user)
    client = httpx.AsyncClient(base_url=server.url, cookies={auth.COOKIE: cookie}, timeout=60)
    return client, csrf_for(server, cookie)


def text_of(page: str) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page)).split())


async def test_the_api_revises_one_section_and_keeps_the_version_before(
    server: WebServer, revise_worker: WebWorker
) -> None:
    research = alices(revise_worker)
    async with server.client("alice") as api:
        before = (await api.get(f"/api/research/{research}")).json()
        assert before["version"] == 1 and len(before["versions"]) == 1
        original = before["report_markdown"]

        done = await api.post(
            f"/api/research/{research}/sections/1/revise", json={"feedback": "shorter"}
        )
        assert done.status_code == 200, done.text
        outcome = done.json()
        assert outcome["version"] == 2 and outcome["section"] == 1
        assert outcome["heading"] == "Settling and inspection"
        assert outcome["section_markdown"].endswith("*")
        assert "Revised (version 2) at the reader's request:" in outcome["section_markdown"]
        assert outcome["verification"]["claims"] >= 1

        now = (await api.get(f"/api/research/{research}")).json()
        assert now["version"] == 2 and now["report_markdown"] == outcome["report_markdown"]
        assert [v["version"] for v in now["versions"]] == [1, 2]
        assert now["versions"][1]["feedback"] == "shorter"
        assert now["versions"][1]["section"] == 1
        earlier = (await api.get(f"/api/research/{research}", params={"version": 1})).json()
        assert earlier["version"] == 1 and earlier["report_markdown"] == original

        # only that section changed: the rest of the report byte for byte
        new = now["report_markdown"]
        old_section, new_section = sections(original)[0], sections(new)[0]
        assert new[: new_section.body_start] == original[: old_section.body_start]
        assert new[new_section.end :] == original[old_section.end :]
        assert len(new_section.body(new)) < len(old_section.body(original))

        md = await api.get(f"/api/research/{research}/report", params={"format": "md"})
        assert md.status_code == 200 and "Revised (version 2)" in md.text
        first = await api.get(
            f"/api/research/{research}/report", params={"format": "md", "version": 1}
        )
        assert first.status_code == 200 and "Revised (version" not in first.text


async def test_someone_elses_research_is_unknown_and_bad_input_is_one_line(
    server: WebServer, revise_worker: WebWorker
) -> None:
    research = alices(revise_worker)
    path = f"/api/research/{research}/sections/1/revise"
    async with server.client("bob") as bob:
        refused = await bob.post(path, json={"feedback": "shorter"})
        assert one_line_error(refused, 404) == f"no research with id {research}"
        earlier = await bob.get(f"/api/research/{research}", params={"version": 1})
        assert one_line_error(earlier, 404) == f"no research with id {research}"
    async with server.client("alice") as alice:
        assert one_line_error(
            await alice.post(f"/api/research/{research}/sections/9/revise", json={"feedback": "x"}),
            422,
        ) == (f"the report of {research} has no section 9: it has 3 sections (1 to 3)")
        assert "feedback is empty" in one_line_error(
            await alice.post(path, json={"feedback": "  "}), 422
        )
        assert "tone" in one_line_error(
            await alice.post(path, json={"feedback": "x", "tone": "formal"}), 422
        )
        assert one_line_error(
            await alice.get(f"/api/research/{research}", params={"version": 4}), 422
        ) == (f"research {research} has no version 4: it has only version 1")
        running = await start(alice, review_plan=True)  # waits for its plan review
        try:
            refused = await alice.post(
                f"/api/research/{running}/sections/1/revise", json={"feedback": "shorter"}
            )
            assert one_line_error(refused, 422) == (
                f"research {running} is still running: a section can be revised once its "
                "report is finished"
            )
        finally:
            await alice.post(f"/api/research/{running}/cancel")
    stored = (await _get(server, research))["report_markdown"]
    assert "Revised (version" not in stored  # nothing was revised by any of that


async def _get(server: WebServer, research: str) -> dict[str, Any]:
    async with server.client("alice") as alice:
        return dict((await alice.get(f"/api/research/{research}")).json())


async def test_the_page_revises_a_section_without_javascript_and_links_the_earlier_version(
    server: WebServer, revise_worker: WebWorker
) -> None:
    research = alices(revise_worker)
    client, csrf = browser(server, "alice")
    async with client:
        page = (await client.get(f"/research/{research}")).text
        forms = re.findall(r'<form class="revise-form"[^>]*>.*?</form>', page, re.S)
        assert len(forms) == 3  # one per section of the report
        assert f'action="/research/{research}/sections/2/revise"' in forms[1]
        assert '<label for="section-2-feedback">Feedback</label>' in forms[1]
        assert '<textarea id="section-2-feedback" name="feedback"' in forms[1]
        assert ">Revise this section</button>" in forms[1]
        assert "revised" not in text_of(page).split("Sources")[0]

        posted = await client.post(
            f"/research/{research}/sections/2/revise",
            data={"csrf": csrf, "feedback": "only the lead pipes"},
        )
        assert posted.status_code == 303
        assert posted.headers["location"] == f"/research/{research}#section-2-revise"

        after = (await client.get(f"/research/{research}")).text
        shown = text_of(after)
        assert "revised in version 2 at the reader's request" in shown
        assert f'href="/research/{research}?version=1#section-2-revise"' in after
        assert "Earlier version of this section (version 1)" in shown
        # the section now says only what the feedback asked for: the lead pipes
        part = shown.split("Distribution", 1)[1].split("What the records say")[0]
        assert "pipes" in part and "Distribution tanks" not in part

        old = (await client.get(f"/research/{research}", params={"version": 1})).text
        assert "You are reading version 1 of this report" in text_of(old)
        assert "Distribution tanks at the city edge" in text_of(old)
        assert 'class="revise-form"' not in old  # an earlier version is read, not revised
        assert f"/api/research/{research}/report?format=md&amp;version=1" in old

        bad = await client.post(
            f"/research/{research}/sections/7/revise", data={"csrf": csrf, "feedback": "x"}
        )
        assert bad.status_code == 422 and "has no section 7" in text_of(bad.text)
