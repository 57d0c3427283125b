"""`revise ID --section N "FEEDBACK"`: one section of a finished report rewritten with your
feedback, its claims checked again, the rest of the report left as it was.

Prints the revised section and the new version's number; `show ID` prints the whole report at
its latest version, `show ID --version 1` the report as the research wrote it. Refusals (an
unknown or someone else's id, a research still running, a section that does not exist, empty
feedback) are one line, exit 2 (starter/client/revisions.py says which).
"""

from __future__ import annotations

import argparse

from starter.cli.exits import EXIT_OK
from starter.cli.hints import show_command
from starter.cli.progress import say
from starter.client import revisions
from starter.client.session import Session
from starter.client.terminal import clean

SECTION_HELP = (
    "the section's number, from 1: the report's `## ` headings in order (the Summary counts; "
    "the Sources list does not)"
)


async def revise(args: argparse.Namespace, session: Session) -> int:
    outcome = await revisions.revise(session, args.id, args.section, args.feedback)
    if args.json:
        print(outcome.model_dump_json(indent=2))
        return EXIT_OK
    print(clean(f"## {outcome.heading}\n\n{outcome.section_markdown}"))
    say(
        f"revised section {outcome.section} of {outcome.research_id}: version {outcome.version} "
        f"of its report (the whole report: `{show_command(outcome.research_id)}`; "
        f"the one before: `{show_command(outcome.research_id, outcome.version - 1)}`)"
    )
    return EXIT_OK
