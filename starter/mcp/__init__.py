"""The MCP front end: `python -m starter mcp`, a Model Context Protocol server over stdio for
agents and editors. `server.py` builds it (research, steering, the report as a resource);
`library.py`, `standing.py` and `check.py` add the tools of the library, standing research and
citation checks. It starts, steers and reads research only through the client modules, as the
CLI and the web app do, and maps their failures to MCP tool errors."""
