"""A research that does not answer its status query in time is told slow from
stopped by its task queue's pollers (Temporal's DescribeTaskQueue), not by the one query: a busy
worker means "still working", and only a queue nobody polls gets the advice to start a worker."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from temporalio.api.taskqueue.v1 import TaskQueue
from temporalio.api.workflowservice.v1 import PollWorkflowTaskQueueRequest
from temporalio.client import Client

from starter.client.errors import ClientError, Kind
from starter.client.temporal import query_status


async def _research_on(client: Client, queue: str, prefix: str = "slow-") -> str:
    research_id = f"{prefix}{uuid.uuid4().hex[:8]}"
    await client.start_workflow("DeepResearchWorkflow", id=research_id, task_queue=queue)
    return research_id


async def test_a_busy_worker_is_still_working_with_no_advice_to_start_one(
    dev_client: Client,
) -> None:
    queue = f"busy-{uuid.uuid4().hex[:8]}"
    research_id = await _research_on(dev_client, queue, prefix="research-")
    # A worker that took the research's workflow task and is still working on it.
    taken = await dev_client.workflow_service.poll_workflow_task_queue(
        PollWorkflowTaskQueueRequest(
            namespace=dev_client.namespace, task_queue=TaskQueue(name=queue), identity="busy"
        )
    )
    assert taken.workflow_execution.workflow_id == research_id

    with pytest.raises(ClientError) as slow:
        await query_status(dev_client.get_workflow_handle(research_id))
    said = str(slow.value)
    assert slow.value.kind is Kind.NO_ANSWER and slow.value.retry_after_s
    assert "still working" in said and "worker.py" not in said and "start one" not in said
    assert said.startswith(f"{research_id} is still working")  # never "research research-…"


async def test_a_queue_nobody_polls_gets_the_advice_to_start_a_worker(dev_client: Client) -> None:
    research_id = await _research_on(dev_client, f"gone-{uuid.uuid4().hex[:8]}")
    with pytest.raises(ClientError) as stopped:
        await asyncio.wait_for(query_status(dev_client.get_workflow_handle(research_id)), 30)
    said = str(stopped.value)
    assert said.startswith(f"research {research_id} did not answer")  # an id of one's own
    assert "no worker polls its task queue" in said and "start one with `make dev`" in said
    assert stopped.value.retry_after_s is None
