"""A role is defined once, by its row in workflows/roles.py; these tests fail when a row lacks what
it takes (its prompt file, a method on each engine, a fallback) or when something built from the
rows (the worker's activities, the doubles, the reply models, the table in docs/operations.md) disagrees."""

from __future__ import annotations

from pathlib import Path

import pytest
from temporalio import activity

import worker
from activities.engine import missing
from activities.offline_engine import OfflineEngine
from activities.openai_engine import OpenAIEngine
from activities.openai_engine.replies import REPLIES
from activities.prompts.loader import PROMPTS_DIR, load_prompt
from settings.llm import LLM_CALL_LIMIT_MAX_S, LLMSettings
from tests.support.doubles import DEFAULTS, Script
from workflows import roles
from workflows.activity_role import LLM_CALL_LIMIT_MAX, AnyRole
from workflows.roles import LLM_ROLES, PROMPTS, ROLES, markdown_table

REPO = Path(__file__).resolve().parents[2]
NAMES = [role.name for role in ROLES]


def definition(fn: object) -> activity._Definition:
    found = activity._Definition.from_callable(fn)
    assert found is not None
    return found


def test_names_are_unique_and_every_role_says_what_happens_when_its_retries_are_spent() -> None:
    assert len(set(NAMES)) == len(NAMES) and len(PROMPTS) == sum(len(r.asks) for r in ROLES)
    assert all(role.fallback.strip() for role in ROLES)


@pytest.mark.parametrize("role", LLM_ROLES, ids=lambda r: r.name)
def test_every_llm_role_has_its_prompt_files(role: AnyRole) -> None:
    for prompt in role.asks:
        assert (PROMPTS_DIR / f"{prompt.file}.md").is_file(), (
            f"{role.name}: add activities/prompts/{prompt.file}.md"
        )
        assert load_prompt(prompt.file).variables
        assert 0 < prompt.max_tokens and 0 < prompt.silence_timeout_s < role.timeout.total_seconds()


def test_every_prompt_file_is_a_rows() -> None:
    assert sorted(p.stem for p in PROMPTS_DIR.glob("*.md")) == sorted(PROMPTS)


@pytest.mark.parametrize("engine", [OfflineEngine, OpenAIEngine])
def test_each_engine_has_one_method_per_llm_role_with_the_rows_models(engine: type) -> None:
    """The offline engine's method is the role's offline rule; the OpenAI engine's asks its prompt."""
    assert missing(engine) == []


def test_the_engine_check_names_what_is_missing() -> None:
    class Partial:
        name = "partial"

        async def route(self, inp: roles.m.RouteInput) -> roles.m.ClarifyOutput: ...

        def clarify(self, inp: roles.m.ClarifyInput) -> roles.m.ClarifyOutput: ...

    found = missing(Partial)

    assert found[:3] == [
        "Partial.route is not (RouteInput) -> RouteOutput",
        "Partial has no async method clarify",
        "Partial has no async method coordinate",
    ]
    assert len(found) == len(LLM_ROLES)


def test_the_worker_registers_each_row_under_its_name_with_its_models() -> None:
    built = [definition(fn) for fn in worker.ACTIVITIES]

    assert [d.name for d in built] == NAMES
    for found, role in zip(built, ROLES, strict=False):
        assert (found.arg_types, found.ret_type) == ([role.input], role.output), role.name
        assert found.is_async


def test_the_doubles_stand_in_for_every_row() -> None:
    built = [definition(fn) for fn in Script().activities()]
    assert list(DEFAULTS) == NAMES
    assert [(d.name, d.arg_types, d.ret_type) for d in built] == [
        (r.name, [r.input], r.output) for r in ROLES
    ]


def test_the_openai_engine_reads_each_llm_roles_reply_with_a_model_of_its_own() -> None:
    assert list(REPLIES) == [role.name for role in LLM_ROLES]
    assert len({model.__name__ for model in REPLIES.values()}) == len(REPLIES)


def test_the_docs_show_the_table_the_rows_draw() -> None:
    page = (REPO / "docs" / "operations.md").read_text()
    assert markdown_table() in page, (
        "run `python -m workflows.roles` and paste it into docs/operations.md"
    )


def test_an_llm_activity_may_take_the_longest_call_a_deployment_may_allow() -> None:
    """The workflow cannot read LLM_CALL_LIMIT_S: every LLM role's start-to-close timeout is
    above the most it may be (settings/llm.py), so the engine's own limits end a call first."""
    assert LLM_CALL_LIMIT_MAX.total_seconds() == LLM_CALL_LIMIT_MAX_S
    assert LLMSettings.model_fields["call_limit_s"].metadata[-1].le == LLM_CALL_LIMIT_MAX_S
    for role in LLM_ROLES:
        assert role.timeout > LLM_CALL_LIMIT_MAX, role.name
