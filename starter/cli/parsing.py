"""The CLI's table of commands as argparse reads it: a `Command` with its `arg`s (one table in
main.py), a `research` request option as its flag (`request_arg`: type, choices and default from
the request model), and a parser whose errors are one line with the `--help` that runs here.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any, NoReturn

from starter.cli.exits import EXIT_USAGE
from starter.cli.hints import SCRIPT, program
from starter.cli.progress import say
from starter.client import requests
from starter.client.session import Session

#: A command: async, run in an event loop; or plain (`serve`, which runs its own loop).
Handler = Callable[[argparse.Namespace, Session], Coroutine[Any, Any, int] | int]
#: One `add_argument` call: its names and its keywords.
Arg = tuple[tuple[str, ...], dict[str, Any]]


def arg(*names: str, **options: Any) -> Arg:
    return names, options


@dataclass(frozen=True)
class Command:
    name: str
    help: str
    handler: Handler | None = None
    args: tuple[Arg, ...] = ()
    #: Flags of which exactly one must be given.
    one_of: tuple[Arg, ...] = ()
    #: Sub-commands (`prompts push`), in place of a handler.
    actions: tuple[Command, ...] = ()


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, not usage + message
        # The usage shows the program's name; the hint is what runs in this shell (starter/cli/hints.py).
        words = self.prog.split(" ", 1)[1:] if self.prog.startswith(SCRIPT) else []
        say(f"error: {message} (see `{' '.join([program(), *words])} --help`)")
        sys.exit(EXIT_USAGE)


def request_arg(option: requests.Option) -> Arg:
    """A request option's flag: type, choices and on/off from the model; absent = the model's default."""
    kind = requests.value_type(option.field)
    given: dict[str, Any] = {
        "dest": option.field,
        "default": argparse.SUPPRESS,
        "help": requests.help_of(option),
    }
    if kind is bool:
        return arg(
            option.flag,
            action="store_false" if requests.default(option.field) else "store_true",
            **given,
        )
    if (names := requests.choices(option.field)) is not None:
        return arg(option.flag, choices=names, **given)
    return arg(option.flag, type=kind, metavar=option.metavar, **given)


def add_commands(
    parser: argparse.ArgumentParser, table: tuple[Command, ...], dest: str, metavar: str
) -> None:
    sub = parser.add_subparsers(dest=dest, required=True, metavar=metavar)
    for command in table:
        p = sub.add_parser(command.name, help=command.help)
        for names, options in command.args:
            p.add_argument(*names, **options)
        if command.one_of:
            group = p.add_mutually_exclusive_group(required=True)
            for names, options in command.one_of:
                group.add_argument(*names, **options)
        if command.actions:
            add_commands(p, command.actions, dest="action", metavar="ACTION")
        else:
            p.set_defaults(handler=command.handler)
