"""A question back must ask something: SmolLM2-135M, asked to clarify "How did
lighthouse keepers live?", hands the question back word for word, and the research would wait for
the person to answer their own question. Such a question is not asked: the research goes on, or
the engine's own question is asked where its rules find the question vague, and the note says
which (activities/openai_engine/grounding.py)."""

from __future__ import annotations

import pytest

from activities.openai_engine import OpenAIEngine, grounding
from tests.activities.test_openai_engine import (  # noqa: F401 - fixtures
    FakeLLM,
    clean_env,
    completion,
    engine,
    llm,
)
from workflows.activity_models import ClarifyInput
from workflows.models import Message, Speaker

ASKED = "How did lighthouse keepers live?"


@pytest.mark.parametrize(
    "back",
    [
        "How did lighthouse keepers live?",
        "how did Lighthouse Keepers live",
        "How did lighthouse keepers live??",
        "Could you tell me how lighthouse keepers lived?",
        "What exactly do you mean?",
    ],
)
def test_a_question_back_in_the_persons_own_words_repeats_it(back: str) -> None:
    assert grounding.repeats(back, ASKED)


@pytest.mark.parametrize(
    "back",
    [
        "Which lighthouse keepers do you mean: in Scotland or in America, and in which century?",
        "Do you mean their daily routine, or their pay and working conditions?",
    ],
)
def test_a_question_back_about_an_open_point_does_not_repeat_it(back: str) -> None:
    assert not grounding.repeats(back, ASKED)


def _asked(*said: str) -> ClarifyInput:
    return ClarifyInput(messages=[Message(role=Speaker.USER, content=text) for text in said])


async def test_an_echo_of_a_clear_question_is_not_asked_and_the_note_says_why(
    llm: FakeLLM, engine: OpenAIEngine
) -> None:
    llm.replies = [completion({"question": "How did lighthouse keepers live?"})]
    out = await engine.clarify(_asked(ASKED))
    assert out.question == ""
    assert out.note == grounding.ECHO_SKIPPED
    assert "repeated the question, so it was not asked" in out.note


async def test_an_echo_of_a_vague_question_gives_way_to_the_engines_own_question(
    llm: FakeLLM, engine: OpenAIEngine
) -> None:
    llm.replies = [completion({"question": "Which one is better?"})]
    out = await engine.clarify(_asked("Which one is better?"))
    assert out.question and out.question != "Which one is better?"
    assert out.question.endswith("?")
    assert out.note == grounding.ECHO_REPLACED


async def test_a_real_question_back_is_asked_as_the_model_wrote_it(
    llm: FakeLLM, engine: OpenAIEngine
) -> None:
    back = "Which lighthouse keepers do you mean: in Scotland or in America, and when?"
    llm.replies = [completion({"question": back})]
    out = await engine.clarify(_asked(ASKED))
    assert (out.question, out.note) == (back, "")
