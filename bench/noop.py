"""What Temporal itself costs here: a workflow that runs no-op activities one after another, as a
research's critical path does, regular and local. Used by `python -m bench.speed --only noop`
to compare the dev server's dispatch rate before and after our dynamic config."""

from __future__ import annotations

from datetime import timedelta

from temporalio import activity, workflow


@activity.defn(name="bench_noop")
async def noop() -> None:
    return None


@workflow.defn(name="BenchNoopChain")
class NoopChain:
    @workflow.run
    async def run(self, count: int, local: bool) -> None:
        for _ in range(count):
            if local:
                await workflow.execute_local_activity(
                    "bench_noop", start_to_close_timeout=timedelta(seconds=10)
                )
            else:
                await workflow.execute_activity(
                    "bench_noop", start_to_close_timeout=timedelta(seconds=10)
                )
