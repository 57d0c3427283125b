"""The client: the only code that talks to Temporal and to the research library for a person.

Starting, steering, querying and listing research (`research_client`, `steering`), standing
research's schedules (`standing`), owners, the request every front end builds (`requests`), titles,
follow-ups, checking a text's citations (`citations_check`), and the Temporal failures a person can
meet, each turned into one line (`temporal`). The front ends — the CLI (`starter/cli/`), the MCP
server (`starter/mcp/`) and the web app (`starter/web/`) — compose these; nothing here imports a
front end (tests/starter/test_boundaries.py holds the line).
"""
