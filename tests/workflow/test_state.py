"""The research's state in parts (workflows/accounting/state.py, parts.py): a state handed over by continue-as-new
before the parts existed decodes into them, and the `status` / result views are filled from them.

The flat state (flat_state.json) is the one the continued-as-new history recorded before the parts
started with, exactly as the pydantic data converter handed it to the workflow: the second argument
of its run, kept here when tests/workflow/histories were recorded again for v0.1.0."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter

from settings import data_converter
from workflows.accounting.state import ResearchState
from workflows.models import ResearchResult, ResearchStatus, ReviewTarget, Stage

FLAT_STATE = Path(__file__).parent / "flat_state.json"


def _flat_state() -> bytes:
    """The second argument of the recorded run: the whole state of the run before, flat."""
    return FLAT_STATE.read_bytes()


def _decoded() -> tuple[dict[str, Any], ResearchState]:
    raw = _flat_state()
    state = TypeAdapter(ResearchState | None).validate_json(raw)  # what the converter does
    assert state is not None
    return json.loads(raw), state


#: The state's sets: dumped as lists in no particular order.
SETS = {"read_urls", "unreadable_urls"}


def _same(name: str, a: Any, b: Any) -> bool:
    return sorted(a) == sorted(b) if name in SETS else a == b


def test_the_recorded_state_is_flat() -> None:
    flat, _ = _decoded()
    assert "plan" in flat and "inquiry" not in flat and flat["spending"]["phase"] == "research"


def test_every_field_of_a_flat_state_lands_in_its_part() -> None:
    flat, state = _decoded()
    dumped = state.model_dump(mode="json")
    where = {
        name: part for part, model in ResearchState.parts().items() for name in model.model_fields
    }
    unknown = flat.keys() - where.keys() - ResearchState.model_fields.keys()
    assert not unknown, f"fields of the old state kept nowhere: {sorted(unknown)}"
    for key, value in flat.items():
        now = dumped[where[key]][key] if key in where else dumped[key]
        if key == "spending":  # `phase` was removed before the parts: dropped on the way in;
            # the per-role prompt ratios came later: a research from before has learned none yet
            # and the largest prompts seen went with the worst-case admission (folded at v0.1.0)
            dropped = ("phase", "prompt_seen")
            value = {"ratio_by_role": {}, **{k: v for k, v in value.items() if k not in dropped}}
            value = {"afforded_report": False, **value}
        if key == "request":  # later fields take their defaults: a research from before belongs to
            # `local`, nobody attends it, and a re-plan is not reviewed again
            value = {"owner": "local", "attended": False, "review_replans": False, **value}
            value = {"standing_id": None, "notify": [], **value}
            value = {"sources": "configured", **value}
        if key == "sources":  # a source read before kept no fingerprint of its text
            value = [{"digest": "", **source} for source in value]
        if key == "stats":  # a research from before counted no answers of its model
            value = {"llm_answered": 0, "llm_unanswered_by_role": {}, **value}
            value = {"judge_calibration": None, **value}
            value = {"llm_repaired": 0, "llm_reasked": 0, **value}  # nothing was repaired then
        assert _same(key, now, value), key
    assert state.inquiry.plan is not None and state.inquiry.plan_iterations == 2
    assert state.events.last_seq == len(flat["events"]["items"]) + flat["events"]["dropped"]


def test_a_state_in_parts_survives_continue_as_new() -> None:
    _, state = _decoded()
    converter = data_converter().payload_converter
    [payload] = converter.to_payloads([state])
    [again] = converter.from_payloads([payload], [ResearchState | None])
    assert isinstance(again, ResearchState)
    assert again.model_dump(mode="json") == state.model_dump(mode="json")
    assert "inquiry" in json.loads(payload.data) and "plan" not in json.loads(payload.data)


def test_no_field_name_is_kept_twice() -> None:
    """The views are filled by name, and old flat states decode by name: one home per name."""
    names = [name for model in ResearchState.parts().values() for name in model.model_fields]
    names += ResearchState.model_fields
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)


def test_the_result_and_status_show_what_the_flat_state_held_under_the_same_names() -> None:
    """What the hand-written projections took from the flat state, the views take from the parts."""
    flat, state = _decoded()
    start = datetime(2026, 1, 1)
    result = state.result("# report", [], start, start + timedelta(seconds=2.5))
    status = state.status()
    for view in (result, status):
        for name, value in view.model_dump(mode="json").items():
            if name in flat and name != "critique":
                expected = flat[name]
                if name == "stats":  # and the model's answers
                    expected = {
                        **{"llm_answered": 0, "llm_unanswered_by_role": {}},
                        "judge_calibration": None,
                        **{"llm_repaired": 0, "llm_reasked": 0},
                        **flat["stats"],
                        "duration_s": 2.5,
                    }
                if name == "sources":  # and each read source's fingerprint
                    expected = [{"digest": "", **source} for source in flat["sources"]]
                assert value == expected, (type(view).__name__, name)
    assert result.query == status.query == flat["request"]["query"].strip()
    assert result.mode.value == status.mode.value == flat["request"]["mode"]
    assert result.outcome is Stage(flat["stage"]) and result.report_markdown == "# report"
    assert status.sources_count == len(flat["sources"]) and status.clarification_count == len(
        flat["clarifications"]
    )
    assert (
        status.last_event_seq == state.events.last_seq
        and status.first_event_seq == state.events.dropped + 1
    )


@pytest.mark.parametrize(
    "pending, shown", [(None, False), (ReviewTarget.PLAN, False), (ReviewTarget.REPORT, True)]
)
def test_the_status_shows_the_critique_only_while_the_report_awaits_review(
    pending: ReviewTarget | None, shown: bool
) -> None:
    from workflows.models import Critique

    state = ResearchState()
    state.writeup.critique = Critique(
        quality=0.5, quality_reason="q", hallucination_risk=0.1, hallucination_reason="h"
    )
    state.oversight.pending_review = pending
    assert (state.status().critique is not None) is shown


def test_every_field_of_both_views_is_computed_or_kept() -> None:
    """A field added to `ResearchStatus` or `ResearchResult` but kept in no part fails here, not
    in a running research."""
    state = ResearchState()
    assert isinstance(state.status(), ResearchStatus)
    assert isinstance(
        state.result("", [], datetime(2026, 1, 1), datetime(2026, 1, 1)), ResearchResult
    )
    with pytest.raises(
        TypeError, match="ResearchStatus.clarification_count is neither given nor kept"
    ):
        state.view(ResearchStatus)
