"""The starter: `python -m starter ...` starts, follows, steers and inspects research, and serves it
over MCP (`python -m starter mcp`).

Research itself runs on a worker: the starter is a Temporal client for it, through `config.py`'s
settings and connection, with the vocabulary of `workflows/` (the request, status, result and
event models). It also composes `activities/` for the commands that work on this machine without a
workflow: the research library (`history`, `show`, `export`, follow-ups, MCP reports), `extract`
(the crawler), `index` (the local corpus), `prompts push` (Langfuse), and the price table that checks
a cost budget. It needs no LLM or search API keys (`prompts push` needs Langfuse's).

`stack.py` (`make demo`, `make dev`) runs the dev server and `worker.py` as child processes.
Requests are built in `requests.py` (the one way for every client), a command's settings and its
one Temporal client live in `session.py`, the commands and their flags are the table in `cli.py`.
"""
