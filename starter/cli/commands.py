"""The sub-commands. Each takes the parsed arguments and a `Session` and returns an exit code."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

from temporalio.client import WorkflowFailureError, WorkflowHandle
from temporalio.service import RPCError

from config import OFFLINE_NOTICE
from starter.cli import library, progress, reviews
from starter.cli.exits import EXIT_FAILED, EXIT_OK, EXIT_PENDING
from starter.cli.progress import say
from starter.cli.stream import EventPrinter
from starter.client import research_client, revisions
from starter.client.errors import ClientError, Kind
from starter.client.events import EventStream
from starter.client.requests import FLAGS, NAMES, build_request
from starter.client.session import Session
from starter.client.temporal import (
    AnswerRefused,
    deliver,
    is_not_found,
    not_found,
    one_line,
    require_running,
    research_failed,
    shown,
)
from storage.public_names import PublicNames
from workflows.events import EventKind
from workflows.models import ResearchResult, Stage

# --- research -------------------------------------------------------------------------------------


async def research(args: argparse.Namespace, session: Session) -> int:
    values = {name: value for name, value in vars(args).items() if name in NAMES}
    owner = session.user
    request = await research_client.ready(build_request(values, FLAGS), session, FLAGS, owner=owner)
    # Someone can answer a review only at an attached terminal: only then may `auto` ask for one.
    request = request.model_copy(update={"attended": not args.detach and sys.stdin.isatty()})
    if session.cfg.engine_name == "offline":
        say(OFFLINE_NOTICE)
    client = await session.connect()
    workflow_id = args.id or research_client.new_id()
    run = research_client.StartResearch(request=request, owner=owner, id=workflow_id)
    session.starting = workflow_id
    handle = await research_client.start(client, session.cfg, run)
    session.workflow_id = workflow_id
    if args.detach:
        print(
            json.dumps({"id": workflow_id, "run_id": handle.result_run_id})
            if args.json
            else workflow_id
        )
        say(f"started {workflow_id}; follow it with `{progress.result_command(workflow_id)}`")
        return EXIT_OK
    say(
        f"started {workflow_id} ({request.depth.value}, {request.mode.value}) "
        f"on task queue {session.cfg.temporal_task_queue}"
    )
    result = await follow(handle, interactive=sys.stdin.isatty())
    if result is None:
        return EXIT_PENDING
    return emit_result(result, args)


async def follow(handle: WorkflowHandle, interactive: bool) -> ResearchResult | None:
    """Print the research's events as they happen until the result arrives; answer its questions
    and reviews. None: one needs an answer and there is no terminal to read it from."""
    stream = EventStream(handle)
    printer = EventPrinter()
    result_task = asyncio.ensure_future(handle.result())
    handled = 0
    try:
        while not result_task.done():
            printer.show(await stream.poll())
            pending = stream.pending
            if pending is not None and pending.seq != handled:
                handled = pending.seq
                if not await _take_up(handle, interactive, result_task):
                    return None
                continue
            await stream.pause(result_task)
        result = result_task.result()
    except WorkflowFailureError as err:
        raise research_failed(handle.id, err) from err
    finally:
        if not result_task.done():
            result_task.cancel()
    printer.show(await stream.poll())  # what happened between the last poll and the end
    return result


async def _take_up(handle: WorkflowHandle, interactive: bool, result_task: asyncio.Future) -> bool:
    """The research asked (a question or a review): ask the person at the terminal, or print the
    commands that answer it. False when nobody answered here (the research keeps waiting)."""
    try:
        status = await research_client.status(handle)
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
    return await ask(handle, question, result_task)


async def ask(handle: WorkflowHandle, question: str, result_task: asyncio.Future) -> bool:
    """Prompt until the workflow accepts an answer, or the question lapses. False at end of input.
    (The question itself was printed with its event.)"""
    while True:
        print("your answer> ", end="", file=sys.stderr, flush=True)
        line = progress.read_line()
        await asyncio.wait({line, result_task}, return_when=asyncio.FIRST_COMPLETED)
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
        except AnswerRefused as refused:
            say(f"error: answer refused: {refused}")
        try:
            still = (await research_client.status(handle)).pending_question == question
        except ClientError:
            still = True
        if not still:
            return True  # the question lapsed (timed out) while we were typing


def emit_result(result: ResearchResult, args: argparse.Namespace) -> int:
    result = PublicNames.of_settings().model(result)  # local sources by name (issue 38)
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
    client = await session.connect()
    handle = research_client.handle(client, args.id)
    await research_client.check_owner(handle, session.cfg)
    session.workflow_id = args.id
    stream = EventStream(handle, since=args.since)
    printer = EventPrinter(sys.stdout, as_json=args.json, times=True)
    printer.show(await stream.poll(tolerant=False))  # an unknown id ends here, exit 2
    session.reattach = progress.watch_command(args.id, stream.seq)
    result_task = asyncio.ensure_future(handle.result())
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
    except WorkflowFailureError as err:
        printer.show(await stream.poll())
        raise research_failed(args.id, err) from err
    finally:
        if not result_task.done():
            result_task.cancel()
    printer.show(await stream.poll())
    if outcome.outcome == Stage.COMPLETED:
        return EXIT_OK
    say(
        f"error: the research was {outcome.outcome.value}; `{progress.result_command(args.id)}` shows what it had found"
    )
    return EXIT_FAILED


async def answer(args: argparse.Namespace, session: Session) -> int:
    handle = (await session.connect()).get_workflow_handle(args.id)
    await research_client.check_owner(handle, session.cfg)
    print(
        await deliver(handle, "answer", lambda running: research_client.answer(running, args.text))
    )
    return EXIT_OK


async def status(args: argparse.Namespace, session: Session) -> int:
    """The status query; while a report review waits, the text shows the whole draft too (the
    JSON carries it as `draft_report_markdown`)."""
    client = await session.connect()
    handle = client.get_workflow_handle(args.id)
    await research_client.check_owner(handle, session.cfg)
    current = await research_client.status(handle)
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
    what for and the command that answers it (on stderr: stdout stays the report)."""
    client = await session.connect()
    handle = research_client.handle(client, args.id)
    await research_client.check_owner(handle, session.cfg)
    session.workflow_id = args.id
    result_task = asyncio.ensure_future(handle.result())
    try:
        await _say_what_it_waits_for(handle, result_task)
        outcome = await result_task
    except WorkflowFailureError as err:
        raise research_failed(args.id, err) from err
    except RPCError as err:
        if is_not_found(err):
            raise not_found(args.id) from err
        raise
    finally:
        if not result_task.done():
            result_task.cancel()
    # a section revised since (`revise`): the library's latest version of the report
    return emit_result(revisions.latest_result(session, args.id, outcome), args)


async def _say_what_it_waits_for(handle: WorkflowHandle, result_task: asyncio.Future) -> None:
    """Follow the research's events quietly until it ends; each new question or review is said
    once. A research already closed is not queried (no worker is needed to read its result)."""
    await asyncio.wait({result_task}, timeout=0.5)
    stream, said = EventStream(handle), 0
    while not result_task.done():
        poll = asyncio.ensure_future(stream.poll())
        await asyncio.wait({poll, result_task}, return_when=asyncio.FIRST_COMPLETED)
        if not poll.done():
            poll.cancel()
            return
        poll.result()
        if stream.pending is not None and stream.pending.seq != said:
            said = stream.pending.seq
            await _say_waiting(handle)
        await stream.pause(result_task)


async def _say_waiting(handle: WorkflowHandle) -> None:
    try:
        current = await research_client.status(handle)
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
    client = await session.connect()
    handle = client.get_workflow_handle(args.id)
    await research_client.check_owner(handle, session.cfg)
    try:
        await require_running(handle, "cancel")
    except ClientError:
        try:
            cancelled = (
                await research_client.handle(client, args.id).result()
            ).outcome is Stage.CANCELLED
        except Exception:  # failed, or its result unreadable: the first message stands
            cancelled = False
        if cancelled:
            raise ClientError(
                f"research {shown(args.id)} was already cancelled: nothing to cancel", Kind.CONFLICT
            ) from None
        raise
    await research_client.cancel(handle)
    print(
        f"cancellation requested for {args.id}; `{progress.result_command(args.id)}` "
        "shows what it had found"
    )
    return EXIT_OK
