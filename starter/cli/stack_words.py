"""What the local stack (starter/cli/stack.py) says to the person who started it: the commands to
run next, whole and runnable in the shell that ran `make demo` or `make dev` (with
`TEMPORAL_ADDRESS` when the stack's Temporal is not on the default port), where the research is
kept, and who owns it when access control is on."""

from __future__ import annotations

import shlex

from settings import Settings
from starter.cli.hints import program
from starter.cli.progress import fit

PORT, UI_PORT = 7233, 8233
#: The web app's port (`make dev` takes the next free one when it is in use).
WEB_PORT = 8000


def web_url(web_port: int, path: str = "/") -> str:
    return f"http://127.0.0.1:{web_port}{path}"


def token_user() -> str | None:
    """With RESEARCH_API_TOKENS set and no RESEARCH_USER chosen among its names, the first name:
    research started as `local` would be no signed-in user's, so the web app would answer 404."""
    cfg = Settings()
    names = [
        pair.split(":", 1)[0].strip()
        for pair in (
            cfg.access.api_tokens.get_secret_value() if cfg.access.api_tokens else ""
        ).split(",")
        if ":" in pair
    ]
    return names[0] if names and cfg.access.user not in names else None


def library_place() -> str:
    """Where the research is kept, as the CLI and the web app find it (RESEARCH_DB_URL, or the
    project's `.data/research.sqlite`), without a password."""
    from starter.client.library import where

    return where(Settings().library.db_url)


def stack_program(port: int) -> str:
    """The starter as a printed hint runs it against this stack: with `TEMPORAL_ADDRESS` when the
    stack's Temporal is not on the default port (the shell that ran `make dev` does not have it)."""
    return program() if port == PORT else f"TEMPORAL_ADDRESS=127.0.0.1:{port} {program()}"


def demo_epilogue(
    seconds: float,
    code: int,
    ui_port: int,
    research_id: str,
    owner: str | None = None,
    port: int = PORT,
) -> str:
    """What to do next, at 80 columns: prose wrapped, each command on a line of its own (whole,
    so it runs when pasted into the shell that ran `make demo`)."""
    run, wid = stack_program(port), shlex.quote(research_id)
    lines = [
        "",
        f"demo: finished in {seconds:.0f} s (exit {code}).",
        f"demo: in the Web UI, http://localhost:{ui_port}/namespaces/default/workflows/{research_id} shows the "
        "summary and current details (User Metadata), every activity in the event history, and the "
        "clarification_answer signal under More Actions → Send a Signal.",
        f"demo: the research is kept in the library ({library_place()}), which the CLI reads from any "
        "folder; read it, export it, or ask a follow-up:",
        f"    {run} show {wid}",
        f"    {run} export {wid} --format html",
        f'    {run} research "Tell me more about the second point" --follow-up {wid}',
        f"demo: or read it in the web app at {web_url(WEB_PORT, '/research/' + research_id)} once `make dev` "
        "serves it (this demo does not leave it running; the stored research stays readable there).",
    ]
    if owner:
        lines.append(
            f"demo: access control is on: the research belongs to {owner} (the first name of "
            f"RESEARCH_API_TOKENS); sign in with {owner}'s token to read it."
        )
    return "\n".join(
        wrapped for line in lines for wrapped in (fit(line) if line.startswith("demo:") else [line])
    )
