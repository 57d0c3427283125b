"""Following a research's event stream from outside: `watch`, the attached `research`, the MCP server.

The workflow keeps its events in its state and answers the `events(since)` query (see
workflows/events.py); `EventStream` polls that query with backoff: 0.25 s after something
happened, stretching to 2 s while nothing does (a research waiting a day for an answer costs one
cheap query every 2 s, and nothing in its history). Why not a long-poll update that waits in the
workflow for the next event: every update is written into the workflow's history (accepted and
completed events), so a watcher left open for a day would grow the history it watches; a query
writes nothing. The end of the research is not polled for: `handle.result()` waits for it.

`seq` is gapless, so a client that reconnects with `since` misses nothing the workflow still
keeps, and sees plainly (a first seq above `since + 1`) when more than the kept 500 went by.
"""

from __future__ import annotations

import sys
from typing import TextIO

from starter.cli.progress import WIDTH, clip, fit
from workflows.events import Event, EventKind


def line(event: Event) -> str:
    """One terminal line: `» stage` for a stage, the event's own text indented for the rest."""
    if event.kind is EventKind.STAGE:
        return f"» {event.text}"
    return f"  {clip(event.text, 400)}"  # wrapped to the terminal by the printer


class EventPrinter:
    """Prints events as they come: lines for a person, or one JSON object a line (`--json`)."""

    def __init__(
        self, out: TextIO | None = None, as_json: bool = False, times: bool = False
    ) -> None:
        self.out, self.as_json, self.times = out, as_json, times

    def show(self, events: list[Event]) -> None:
        out = self.out or sys.stderr
        for event in events:
            if self.as_json:
                print(event.model_dump_json(), file=out, flush=True)
                continue
            if event.kind is EventKind.DONE:
                for note in event.data.get("notes") or []:
                    print("\n".join(fit(f"  note: {clip(str(note), 400)}")), file=out)
            prefix = f"{event.at.astimezone():%H:%M:%S} " if self.times else ""
            # 80 columns in all, a command kept whole; wrapped lines indented under the text
            wrapped = fit(line(event), WIDTH - len(prefix))
            print(
                "\n".join(
                    [prefix + wrapped[0], *(" " * len(prefix) + rest for rest in wrapped[1:])]
                ),
                file=out,
                flush=True,
            )
