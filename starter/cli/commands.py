"""The sub-commands. Each takes the parsed arguments and a `Session` and returns an exit code."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from settings import OFFLINE_NOTICE
from starter.cli import library, progress, reviews
from starter.cli.exits import EXIT_FAILED, EXIT_OK, EXIT_PENDING
from starter.cli.progress import say
from starter.cli.stream import EventPrinter
from starter.client import research_client, revisions
from starter.client.errors import ClientError, Kind
from starter.client.events import EventStream
from starter.client.finding import find, find_running
from starter.client.requests import FLAGS, NAMES
from starter.client.session import Session
from starter.client.temporal import deliver, one_line, shown
from workflows.events import EventKind
from workflows.models import ResearchRequest, ResearchResult, Stage

#: A research's result as it is being waited for.
Waiting = asyncio.Future[ResearchResult]

# --- research -------------------------------------------------------------------------------------


async def research(args: argparse.Namespace, session: Session) -> int:
    values = {name: value for name, value in vars(args).items() if name in NAMES}
    workflow_id = args.id or research_client.new_id()

    def readied(request: ResearchRequest) -> None:
        if session.cfg.llm.engine == "offline":
            say(OFFLINE_NOTICE)
        session.starting = workflow_id

    started = await research_client.start_research(
        session,
        values,
        names=FLAGS,
        # Someone can answer a review only at an attached terminal: only then may `auto` ask.
        attended=not args.detach and sys.stdin.isatty(),
        research_id=workflow_id,
        readied=readied,
    )
    session.workflow_id = workflow_id
    if args.detach:
        print(
            json.dumps({"id": workflow_id, "run_id": started.run_id}) if args.json else workflow_id
        )
        say(f"started {workflow_id}; follow it with `{progress.result_command(workflow_id)}`")
        return EXIT_OK
    request = started.request
    say(
        f"started {workflow_id} ({request.depth.value}, {request.mode.value}) "
        f"on task queue {session.cfg.temporal.task_queue}"
    )
    handle = research_client.handle(await session.connect(), workflow_id)
    result = await follow(handle, session, interactive=sys.stdin.isatty())
    if result is None:
        return EXIT_PENDING
    return emit_result(result, args)


async def follow(
    handle: research_client.Handle, session: Session, interactive: bool
) -> ResearchResult | None:
    """Print the research's events as they happen until the result arrives; answer its questions
    and reviews. None: one needs an answer and there is no terminal to read it from."""
    stream = EventStream(handle, cfg=session.cfg)
    printer = EventPrinter()
    result_task = asyncio.ensure_future(research_client.result(handle, cfg=session.cfg))
    handled = 0
    try:
        while not result_task.done():
            printer.show(await stream.poll())
            pending = stream.pending
            if pending is not None and pending.seq != handled:
                handled = pending.seq
                if not await _take_up(handle, session, interactive, result_task):
                    return None
                continue
            await stream.pause(result_task)
        result = result_task.result()
    finally:
        if not result_task.done():
            result_task.cancel()
    printer.show(await stream.poll())  # what happened between the last poll and the end
    return result


async def _take_up(
    handle: research_client.Handle, session: Session, interactive: bool, result_task: Waiting
) -> bool:
    """The research asked (a question or a review): ask the person at the terminal, or print the
    commands that answer it. False when nobody answered here (the research keeps waiting)."""
    try:
        status = await research_client.status(handle, session.cfg)
    except ClientError:
        return True  # asked again on the next event or poll
    if status.pending_review:
        if not interactive:
            reviews.show_pending(status, handle.id)
            say(f"review with:  {reviews.review_command(handle.id)}")
            say(f"then follow:  {progress.result_command(handle.id)}")
            say("(the research waits for the review; nothing was read from stdin)")
            return False
        return await reviews.ask(handle, status, result_task)
    question = status.pending_question
    if not question:
        return True  # answered meanwhile
    if not interactive:
        say(f"answer with:  {progress.answer_command(handle.id)}")
        say(f"then follow:  {progress.result_command(handle.id)}")
        say("(the research waits for the answer; nothing was read from stdin)")
        return False
    return await ask(handle, session, question, result_task)


async def ask(
    handle: research_client.Handle, session: Session, question: str, result_task: Waiting
) -> bool:
    """Prompt until the workflow accepts an answer, or the question lapses. False at end of input.
    (The question itself was printed with its event.)"""
    while True:
        print("your answer> ", end="", file=sys.stderr, flush=True)
        line = progress.read_line()
        either: set[asyncio.Future[Any]] = {line, result_task}
        await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
        if not line.done():
            say()
            return True  # the research finished meanwhile
        text = line.result()
        if text is None:
            say(
                f"\nno answer read; the research keeps waiting. Answer with: "
                f"{progress.answer_command(handle.id)}"
            )
            return False
        try:
            say(f"  {await research_client.answer(handle, text)}")
            return True
        except ClientError as refused:
            if refused.kind not in (Kind.INVALID, Kind.CONFLICT):
                raise
            say(f"error: {refused}")
        try:
            still = (await research_client.status(handle, session.cfg)).pending_question
        except ClientError:
            still = question
        if still != question:
            return True  # the question lapsed (timed out) while we were typing


def emit_result(result: ResearchResult, args: argparse.Namespace) -> int:
    """Print RESULT (as the client hands it: local sources by name) and exit as it ended."""
    text = result.model_dump_json(indent=2) if args.json else result.report_markdown
    print(text)
    if args.out:
        library.write_file(Path(args.out), text + "\n")
    if result.outcome == Stage.COMPLETED:
        return EXIT_OK
    if result.outcome == Stage.CANCELLED:
        say("error: the research was cancelled; the report holds what it had found")
    else:
        reason = result.notes[-1] if result.notes else "no reason recorded"
        say(f"error: the research failed: {one_line(reason)}")
    return EXIT_FAILED


# --- the other sub-commands -----------------------------------------------------------------------


async def watch(args: argparse.Namespace, session: Session) -> int:
    """Print a research's events as they happen until it ends; exit as `result` would."""
    if args.since < 0:
        raise ClientError("--since must be 0 or more", Kind.INVALID)
    handle = _handle(await find_running(session, args.id))
    session.workflow_id = args.id
    stream = EventStream(handle, since=args.since, cfg=session.cfg)
    printer = EventPrinter(sys.stdout, as_json=args.json, times=True)
    printer.show(await stream.poll(tolerant=False))  # an unknown id ends here, exit 2
    session.reattach = progress.watch_command(args.id, stream.seq)
    result_task = asyncio.ensure_future(research_client.result(handle, cfg=session.cfg))
    try:
        while not result_task.done():
            await stream.pause(result_task)
            printer.show(await stream.poll())
            session.reattach = progress.watch_command(args.id, stream.seq)
            if stream.pending is not None:  # said once per question or review
                say(
                    f"answer with:  {progress.answer_command(args.id)}"
                    if stream.pending.kind is EventKind.QUESTION
                    else f"review with:  {reviews.review_command(args.id)}"
                )
                stream.pending = None
        outcome = result_task.result()
    except ClientError as err:
        if err.kind is Kind.FAILED:
            printer.show(await stream.poll())  # the events up to the failure
        raise
    finally:
        if not result_task.done():
            result_task.cancel()
    printer.show(await stream.poll())
    if outcome.outcome == Stage.COMPLETED:
        return EXIT_OK
    say(
        f"error: the research was {outcome.outcome.value}; "
        f"`{progress.result_command(args.id)}` shows what it had found"
    )
    return EXIT_FAILED


def _handle(found: research_client.Found) -> research_client.Handle:
    assert found.handle is not None  # find_running found it in Temporal
    return found.handle


async def answer(args: argparse.Namespace, session: Session) -> int:
    handle = _handle(await find_running(session, args.id))
    print(
        await deliver(handle, "answer", lambda running: research_client.answer(running, args.text))
    )
    return EXIT_OK


async def status(args: argparse.Namespace, session: Session) -> int:
    """The status query; while a report review waits, the text shows the whole draft too (the
    JSON carries it as `draft_report_markdown`)."""
    handle = _handle(await find_running(session, args.id))
    current = await research_client.status(handle, session.cfg)
    if args.json:
        print(current.model_dump_json(indent=2))
        return EXIT_OK
    print(progress.status_summary(args.id, current))
    if current.draft_report_markdown:
        print("\n".join(reviews.report_under_review(args.id, current, limit=None)))
        print(reviews.revise_means(current))
    return EXIT_OK


async def result(args: argparse.Namespace, session: Session) -> int:
    """Wait for the research's result; meanwhile, whenever it waits for a person, say at once
    what for and the command that answers it (on stderr: stdout stays the report). A research
    Temporal forgot is the library's copy."""
    found = await find(session, args.id)
    if found.handle is None:
        assert found.stored is not None  # only the library knows it
        return emit_result(found.stored.result, args)
    session.workflow_id = args.id
    result_task = asyncio.ensure_future(research_client.result(found.handle, cfg=session.cfg))
    try:
        await _say_what_it_waits_for(found.handle, session, result_task)
        outcome = await result_task
    finally:
        if not result_task.done():
            result_task.cancel()
    # a section revised since (`revise`): the library's latest version of the report
    return emit_result(await revisions.latest_result(session, args.id, outcome), args)


async def _say_what_it_waits_for(
    handle: research_client.Handle, session: Session, result_task: Waiting
) -> None:
    """Follow the research's events quietly until it ends; each new question or review is said
    once. A research already closed is not queried (no worker is needed to read its result)."""
    await asyncio.wait({result_task}, timeout=0.5)
    stream, said = EventStream(handle, cfg=session.cfg), 0
    while not result_task.done():
        poll = asyncio.ensure_future(stream.poll())
        either: set[asyncio.Future[Any]] = {poll, result_task}
        await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
        if not poll.done():
            poll.cancel()
            return
        poll.result()
        if stream.pending is not None and stream.pending.seq != said:
            said = stream.pending.seq
            await _say_waiting(handle, session)
        await stream.pause(result_task)


async def _say_waiting(handle: research_client.Handle, session: Session) -> None:
    try:
        current = await research_client.status(handle, session.cfg)
    except ClientError:
        return  # said on the next question or review
    if current.pending_question:
        say(f"research {handle.id} waits for an answer to its question: {current.pending_question}")
        say(f"answer with:  {progress.answer_command(handle.id)}")
    elif current.pending_review:
        reviews.show_pending(current, handle.id)
        say(f"research {handle.id} waits for a review of the {current.pending_review.value}")
        say(f"review with:  {reviews.review_command(handle.id)}")
    else:
        return
    say(
        "(the result follows once it is answered; Ctrl-C stops waiting, the research keeps running)"
    )


async def cancel(args: argparse.Namespace, session: Session) -> int:
    """A research cancelled once is not "already completed" to the person cancelling it again
    (a cancelled research returns what it had, so Temporal calls it completed): its outcome says."""
    found = await find_running(session, args.id)
    handle = _handle(found)
    if not found.running:
        try:
            done = await research_client.result(handle, cfg=session.cfg)
            cancelled = done.outcome is Stage.CANCELLED
        except ClientError:  # failed, or its result unreadable: the first message stands
            cancelled = False
        state = "cancelled" if cancelled else found.state
        raise ClientError(
            f"research {shown(args.id)} {'was' if cancelled else 'is'} already {state}: "
            "nothing to cancel",
            Kind.CONFLICT,
        )
    await research_client.cancel(handle)
    print(
        f"cancellation requested for {args.id}; `{progress.result_command(args.id)}` "
        "shows what it had found"
    )
    return EXIT_OK
