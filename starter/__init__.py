"""The starter: `python -m starter ...` starts, follows, steers and inspects research, and serves it
over MCP (`python -m starter mcp`).

Research itself runs on a worker: the starter is a Temporal client for it, through `settings/` (the
settings and the connection), with the vocabulary of `workflows/` (the request, status, result and
event models). It also composes `activities/` for the commands that work on this machine without a
workflow: the research library (`history`, `show`, `export`, follow-ups, MCP reports), `extract`
(the crawler), `index` (the local corpus), `prompts push` (Langfuse), and the price table that checks
a cost budget. It needs no LLM or search API keys (`prompts push` needs Langfuse's).

`stack.py` (`make demo`, `make dev`) runs the dev server and `worker.py` as child processes.

How the client side is built: three clients, one research client underneath.
- `requests.py` builds a `ResearchRequest` from plain values (the CLI's flags, the MCP tool's
  arguments, the web API's JSON body): the one validation, the one place the edges' `question`
  becomes the models' `query`.
- `client/` is the only door to Temporal and the library (tests/starter/test_boundaries.py holds
  it): `research_client.py` (DeerFlow's gateway `services.py`: `start_research`, which builds,
  readies and starts with a `StartResearch`, the only `start_workflow`, the one memo, the one
  place the owner is written; `answer`, `review`, `cancel`, `status`, `events`, `result`);
  `finding.py` (`find`: whose research is whose, Temporal then the library, another user's
  unknown); `mine.py` (`my_research`: one list of a person's research, Temporal's and the
  library's); `library.py`; `public.py` (everything handed out as people may see it); every
  failure a `ClientError` of a kind (`errors.py`, `temporal.translated`).
- The clients: the CLI (`cli/main.py`, the table of commands and flags; `commands.py`, `reviews.py`,
  `listing.py`, `library.py`; a command's settings and client in `session.py`), the MCP server
  (`mcp/`), and the web app (`web/`: `models.py` the API's request and response models
  and `ResearchView`, running or finished; `deps.py` the dependencies and their aliases;
  `services/` what the routers and the pages do, one module per resource; `api/` one thin router
  per resource; `pages/` one module per page, server-rendered, calling `services/`, never the app's
  own API).
- `exports/` holds the one table of download formats (`FORMATS`), which the CLI's `export`, the
  API's `?format=`, the page's download links and the web app's download limits
  (`web/services/downloads.py`, which writes them in `exports/child.py`'s process) read.

Recipes (the files to touch):
- an API endpoint: its request and response models in `web/models.py`, the work in
  `web/services/<resource>.py` (through `client/` for Temporal and the library), a thin route with `response_model=` in `web/api/<resource>.py` (using the aliases
  of `web/deps.py`), and its test in `tests/starter/web/test_api.py`;
- an export format: its row in `exports/__init__.py`'s `FORMATS` and its writer module in
  `exports/`;
- a role (an LLM call): see docs/architecture.md's "Layout" (its row in `workflows/roles.py`, its
  models, its prompt, one method per engine, the stage that calls it); nothing in `starter/` changes.
"""
