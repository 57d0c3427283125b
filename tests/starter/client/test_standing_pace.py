"""Standing research at human pace, built from the hostile specs themselves on
the dev server. Every kind of spec Temporal accepts is measured as Temporal compiled it (`@every`
with seconds, a seven-field cron with a seconds field, a time zone prefix), refused in one line when
it runs more often than once a minute, and leaves no schedule behind; a user's schedules and their
runs a day are capped; one user's list never walks another user's schedules."""

from __future__ import annotations

import asyncio
import uuid
from datetime import timedelta
from typing import Any

import pytest
from temporalio.client import (
    Client,
    Schedule,
    ScheduleActionStartWorkflow,
    ScheduleIntervalSpec,
    ScheduleSpec,
    ScheduleState,
)

from settings import Settings
from starter.client import schedule_pace, standing
from starter.client.errors import ClientError, Kind
from starter.client.schedule_owners import owner_attributes
from workflows.models import ResearchRequest

QUESTION = "Which herons nest along the Loire in spring?"


def cfg(**extra: Any) -> Settings:
    return Settings(llm_provider="offline", **extra)


def user() -> str:
    return f"pace-{uuid.uuid4().hex[:6]}"


async def add(client: Client, owner: str, settings: Settings | None = None, **spec: Any) -> str:
    return await standing.create(
        client, settings or cfg(), ResearchRequest(query=QUESTION), owner, **spec
    )


@pytest.mark.parametrize(
    "cron",
    [
        "@every 7s",
        "@every 59s",
        "@every 45s/5s",
        "*/15 * * * * * *",  # seven fields: seconds first
        "5,35 */3 * * * * *",
        "10-12 0 8 * * 1 *",
        "CRON_TZ=Europe/Paris */20 * * * * * *",
    ],
)
async def test_a_schedule_faster_than_a_minute_is_refused_in_one_line_and_leaves_nothing(
    dev_client: Client, cron: str
) -> None:
    owner = user()
    with pytest.raises(ClientError) as refused:
        await add(dev_client, owner, cron=cron)
    assert refused.value.kind is Kind.INVALID
    message = str(refused.value)
    assert "\n" not in message and "at least a minute apart" in message
    assert await standing.list_standing(dev_client, cfg(), owner) == []


@pytest.mark.parametrize("cron", ["*/30 * * * * *", "* * * * * *", "CRON_TZ=UTC 0 */2 * * * *"])
def test_a_six_field_cron_is_refused_as_ambiguous(cron: str) -> None:
    with pytest.raises(ClientError) as refused:
        schedule_pace.spec_of(None, cron)
    assert refused.value.kind is Kind.INVALID and "six fields" in str(refused.value)


@pytest.mark.parametrize(
    "cron",
    [
        "@every 90s",
        "@every 1m",
        "* * * * *",
        "17 * * * * * *",
        "@hourly",
        "CRON_TZ=Europe/Oslo 0 7 * * *",
        "0 9 * * 1-5",
    ],
)
async def test_schedules_a_minute_apart_or_slower_are_accepted(
    dev_client: Client, cron: str
) -> None:
    owner = user()
    standing_id = await add(dev_client, owner, cron=cron)
    [listed] = await standing.list_standing(dev_client, cfg(), owner)
    assert listed.id == standing_id and listed.cron == cron and not listed.paused
    await standing.delete(dev_client, cfg(), standing_id, owner)


@pytest.mark.parametrize("every", ["99999999999d", "123456789012345w", "9" * 40 + "s"])
def test_an_every_too_large_for_a_date_is_invalid_not_an_overflow(every: str) -> None:
    with pytest.raises(ClientError) as refused:
        schedule_pace.spec_of(every, None)
    assert refused.value.kind is Kind.INVALID
    assert str(refused.value).endswith("use 1m to 366d")


async def test_a_users_schedules_are_capped(dev_client: Client) -> None:
    owner, settings = user(), cfg(standing_max_per_user=3)
    made = [await add(dev_client, owner, settings, every=f"{d}d") for d in (1, 2, 3)]
    with pytest.raises(ClientError) as refused:
        await add(dev_client, owner, settings, every="4d")
    assert refused.value.kind is Kind.LIMITED and "STANDING_MAX_PER_USER=3" in str(refused.value)
    assert len(await standing.list_standing(dev_client, settings, owner)) == 3
    # Another user is not held by this user's cap.
    other = await add(dev_client, user(), settings, every="1d")
    assert other not in made


async def test_a_users_runs_a_day_are_capped_across_their_schedules(dev_client: Client) -> None:
    owner, settings = user(), cfg(standing_max_runs_per_day=100)
    await add(dev_client, owner, settings, every="20m")  # 72 a day
    for spec in ({"every": "30m"}, {"cron": "*/10 * * * *"}, {"cron": "0 0,12 * * * * *"}):
        with pytest.raises(ClientError) as refused:
            await add(dev_client, owner, settings, **spec)
        assert refused.value.kind is Kind.LIMITED
        assert "STANDING_MAX_RUNS_PER_DAY=100" in str(refused.value)
    await add(dev_client, owner, settings, cron="0 */1 * * *")  # 24 more: 96 a day
    assert len(await standing.list_standing(dev_client, settings, owner)) == 2


async def test_a_users_list_never_walks_another_users_schedules(
    dev_client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    busy, quiet = user(), user()
    for _ in range(37):  # made directly, as many as a cap would allow a busy user
        await dev_client.create_schedule(
            f"standing-{uuid.uuid4().hex[:8]}",
            Schedule(
                action=ScheduleActionStartWorkflow(
                    "DeepResearchWorkflow", id=f"x-{uuid.uuid4().hex}", task_queue="nowhere"
                ),
                spec=ScheduleSpec(intervals=[ScheduleIntervalSpec(every=timedelta(days=1))]),
                state=ScheduleState(paused=True),
            ),
            memo={"owner": busy, "question": QUESTION},
            search_attributes=owner_attributes(busy),
        )
    mine = await add(dev_client, quiet, every="1d")
    walked: list[str] = []
    listed = standing.ids_listed

    async def counting(client: Client, query: str | None) -> list[tuple[str, Any]]:
        found = await listed(client, query)
        walked.extend(i for i, _ in found)
        return found

    monkeypatch.setattr(standing, "ids_listed", counting)
    assert [v.id for v in await standing.list_standing(dev_client, cfg(), quiet)] == [mine]
    assert mine in walked and len(walked) < 37


@pytest.mark.parametrize(
    "url",
    [
        "http://0177.0.0.1:8/hook",
        "http://127.000.000.001/hook",
        "http://\u2460\u2461\u2466.0.0.1/hook",
        "http://localhost./hook",
        "http://LOCALHOST/hook",
        "http://0x7f000001/hook",
        "http://[::ffff:7f00:1]/hook",
        "http://169.254.169.254/latest",
        "http://nowhere-7c1.invalid/hook",
        "ftp://example.org/hook",
        "http://user:pw@example.org/hook",
    ],
)
async def test_a_notify_url_that_is_private_unusual_or_unresolvable_is_refused_at_create(
    dev_client: Client, url: str
) -> None:
    owner = user()
    with pytest.raises(ClientError) as refused:
        await add(dev_client, owner, every="1d", notify=[url])
    assert refused.value.kind is Kind.INVALID
    assert str(refused.value).startswith("invalid notify URL ") and "\n" not in str(refused.value)
    assert await standing.list_standing(dev_client, cfg(), owner) == []


async def test_the_owner_reads_their_own_receivers_secret_in_the_detail(
    dev_client: Client,
) -> None:
    from activities.notify.receivers import receiver_secret

    owner = user()
    settings = cfg(webhook_allow_private=True, research_webhook_secret="operator-key-0123456789")
    standing_id = await add(
        dev_client, owner, settings, every="1d", notify=["HTTP://127.0.0.1:9/Hook?x=1"]
    )
    described = await standing.owned(dev_client, settings, standing_id, owner)
    shown = await standing.detail(dev_client, settings, described, {})
    [receiver] = shown.receivers
    assert receiver.url == "http://127.0.0.1:9/Hook?x=1"  # as it is signed and sent
    assert receiver.secret == receiver_secret("operator-key-0123456789", owner, receiver.url)
    assert "operator-key" not in shown.model_dump_json()


async def test_run_now_counts_toward_a_users_runs_a_day(dev_client: Client) -> None:
    owner, settings = user(), cfg(standing_max_runs_per_day=2)
    standing_id = await add(dev_client, owner, settings, every="1d")  # 1 a day by its spec
    for _ in range(2):
        research_id = await standing.run_now(dev_client, settings, standing_id, owner)
        await dev_client.get_workflow_handle(research_id).terminate("as if it finished")
        await asyncio.sleep(1.1)  # a run's id is its schedule's plus the second it started
    with pytest.raises(ClientError) as refused:
        await standing.run_now(dev_client, settings, standing_id, owner)
    assert refused.value.kind is Kind.LIMITED and refused.value.retry_after_s
    assert "STANDING_MAX_RUNS_PER_DAY=2" in str(refused.value)


async def test_a_standing_research_made_before_the_owner_attribute_is_still_listed(
    dev_client: Client,
) -> None:
    owner, standing_id = user(), f"standing-{uuid.uuid4().hex[:8]}"
    await dev_client.create_schedule(  # as older code made them: no attribute
        standing_id,
        Schedule(
            action=ScheduleActionStartWorkflow(
                "DeepResearchWorkflow", id=standing_id, task_queue="nowhere"
            ),
            spec=ScheduleSpec(intervals=[ScheduleIntervalSpec(every=timedelta(days=1))]),
            state=ScheduleState(paused=True),
        ),
        memo={"owner": owner, "question": QUESTION, "every": "1d"},
    )
    for _ in range(50):  # visibility is eventually consistent
        listed = await standing.list_standing(dev_client, cfg(), owner)
        if listed:
            break
        await asyncio.sleep(0.1)
    assert [v.id for v in listed] == [standing_id]
    assert await standing.list_standing(dev_client, cfg(), user()) == []


async def test_a_standing_research_made_before_receivers_had_secrets_shows_them(
    dev_client: Client,
) -> None:
    from activities.notify.receivers import receiver_secret
    from starter.client import research_client

    owner, standing_id = user(), f"standing-{uuid.uuid4().hex[:8]}"
    key = "operator-key-9876543210"
    settings = cfg(research_webhook_secret=key)
    request = ResearchRequest(query=QUESTION, notify=["HTTP://127.0.0.1:9/old-hook"])
    run = research_client.StartResearch(request=request, owner=owner, id=standing_id)
    await dev_client.create_schedule(  # as older code did: the memo counts receivers only
        standing_id,
        Schedule(
            action=research_client.scheduled_start(settings, run),
            spec=ScheduleSpec(intervals=[ScheduleIntervalSpec(every=timedelta(days=1))]),
            state=ScheduleState(paused=True),
        ),
        memo={"owner": owner, "question": QUESTION, "every": "1d", "notify": 1},
    )
    described = await standing.owned(dev_client, settings, standing_id, owner)
    [receiver] = (await standing.detail(dev_client, settings, described, {})).receivers
    assert receiver.url == "http://127.0.0.1:9/old-hook"  # as deliveries sign it
    assert receiver.secret == receiver_secret(key, owner, receiver.url)
