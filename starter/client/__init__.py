"""The client: the only code that talks to Temporal and to the research library for a person.

Starting, steering, querying and listing research (`research_client`, `steering`), finding a
person's own research (`finding.find`: Temporal, then the library; another user's is unknown), a
person's research as one list (`mine.my_research`), their library (`library`), standing
research's schedules (`standing`), the request every front end builds (`requests`), titles,
follow-ups, checking a text's citations (`citations_check`), operators' questions (`operations`:
health, metrics), and the Temporal failures a person can meet, each turned into one line and a
kind (`temporal`, `errors`). What it hands out is as people may see it (`public`).

The front ends — the CLI (`starter/cli/`), the MCP server (`starter/mcp/`) and the web app
(`starter/web/`) — compose these and import neither `temporalio` nor `storage` themselves; nothing
here imports a front end (tests/starter/test_boundaries.py holds both lines).
"""
