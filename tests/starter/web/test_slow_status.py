"""A research whose worker is busy (it polls its task queue, but has not
answered the status query in time) reads "still working" in the web app, never the red advice to
start a worker: the API says 503 with Retry-After (busy, ask again), the page renders normally."""

from __future__ import annotations

import uuid

from temporalio.api.taskqueue.v1 import TaskQueue
from temporalio.api.workflowservice.v1 import PollWorkflowTaskQueueRequest
from temporalio.client import Client

from tests.starter.web.conftest import WebServer

#: What the busy research was asked: its page is headed by it, though its status is not to be had.
BUSY_QUESTION = "How do spring tides differ from neap tides?"


async def busy_research(client: Client) -> str:
    """A research of `local` whose worker took its workflow task and is still working on it."""
    queue, research_id = f"busy-{uuid.uuid4().hex[:8]}", f"busy-{uuid.uuid4().hex[:8]}"
    await client.start_workflow(
        "DeepResearchWorkflow",
        id=research_id,
        task_queue=queue,
        memo={"owner": "local", "question": BUSY_QUESTION},
    )
    await client.workflow_service.poll_workflow_task_queue(
        PollWorkflowTaskQueueRequest(
            namespace=client.namespace, task_queue=TaskQueue(name=queue), identity="busy"
        )
    )
    return research_id


async def test_a_busy_research_is_still_working_in_the_api_and_on_its_page(
    open_web_server: WebServer, dev_client: Client
) -> None:
    research_id = await busy_research(dev_client)
    async with open_web_server.client(None) as http:
        api = await http.get(f"/api/research/{research_id}")
        assert api.status_code == 503 and api.headers.get("retry-after")
        assert "still working" in api.json()["error"]
        assert "worker.py" not in api.json()["error"]

        page = await http.get(f"/research/{research_id}")
    assert page.status_code == 200, page.text[-1500:]
    assert "still working" in page.text and "Cancel research" in page.text
    # Named by its question, and said to be still working once (the stage is Temporal's word).
    assert f"<h1>{BUSY_QUESTION}</h1>" in page.text.replace("\n", "")
    assert page.text.count("still working") == 1, page.text
    assert '<strong id="stage">running</strong>' in page.text
    assert "worker.py" not in page.text and "start one" not in page.text
