"""`POST /api/check` through a real uvicorn with access control on (Temporal unreachable: a check
does not need it), and the MCP tool `check_claims` through the `mcp` SDK's stdio client: the same
answer as `check --json`, and never a file of the server read."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters, stdio_client

from settings import Settings
from starter.web.services.checks import CHECK_TIMEOUT_S
from tests.starter.cli.test_check_cli import FAITHFUL, SOURCE, one_paragraph_lines
from tests.starter.cli.test_starter import REPO, closed_port, offline_env  # noqa: F401 - fixture
from tests.starter.web.conftest import TOKENS, one_line_error, running_app

TEXT = one_paragraph_lines(FAITHFUL)
#: A check runs in a niced child that the server kills after CHECK_TIMEOUT_S (503): the clients
#: wait for that, not for httpx's 30 s, which a busy machine's child outlasted.
CHECK_WAIT_S = CHECK_TIMEOUT_S + 30
SOURCES = [{"id": 1, "title": "The with statement", "text": SOURCE}]


def app_config(**extra: Any) -> Settings:
    return Settings(
        _env_file=None,
        temporal_address=f"127.0.0.1:{closed_port()}",
        llm_provider="offline",
        research_api_tokens=",".join(f"{name}:{token}" for name, token in TOKENS.items()),
        **extra,
    )


async def test_a_text_is_checked_against_the_sources_given() -> None:
    changed = TEXT.replace("up to 20", "up to 30")
    with running_app(app_config(), TOKENS) as server:
        async with server.client(timeout=CHECK_WAIT_S) as client:
            faithful = await client.post("/api/check", json={"markdown": TEXT, "sources": SOURCES})
            wrong = await client.post("/api/check", json={"markdown": changed, "sources": SOURCES})
            long = await client.post(
                "/api/check",
                json={
                    "markdown": TEXT,
                    "sources": [{"id": 1, "text": SOURCE + "\n\nmore" * 11000}],
                },
            )
        async with server.client(user=None, timeout=CHECK_WAIT_S) as stranger:
            refused = await stranger.post("/api/check", json={"markdown": TEXT, "sources": SOURCES})
    assert faithful.status_code == 200, faithful.text
    result = faithful.json()
    assert [s["verdict"] for s in result["sentences"]] == ["supported"] * 3
    assert (result["supported"], result["partial"], result["unsupported"]) == (3, 0, 0)
    assert (result["unverified"], result["checked_by"]) == (0, "lexical")
    assert set(result["sentences"][0]) == {
        "text",
        "source_ids",
        "verdict",
        "reason",
        "evidence",
        "checked_by",
    }
    assert wrong.json()["sentences"][2]["verdict"] == "unsupported"
    assert wrong.json()["sentences"][2]["evidence"] == [
        "One with statement may hold up to 20 context managers on a single line."
    ]
    assert one_line_error(refused, 401).startswith("sign in")
    assert long.json()["sources"] == [
        {"id": 1, "title": "source 1", "url": "", "error": None, "cut": True}
    ]
    assert long.json()["supported"] == 3  # what the first 60,000 characters say is checked


async def test_no_path_of_the_server_is_ever_read(tmp_path: Path) -> None:
    secret = tmp_path / "secret.md"
    secret.write_text(SOURCE)
    listed = TEXT + f"\n## Sources\n\n- [1] Notes — {secret} (local)\n"
    with running_app(app_config(), TOKENS) as server:
        async with server.client(timeout=CHECK_WAIT_S) as client:
            as_file_url = await client.post(
                "/api/check",
                json={"markdown": TEXT, "sources": [{"id": 1, "url": secret.as_uri()}]},
            )
            as_path = await client.post(
                "/api/check", json={"markdown": TEXT, "sources": [{"id": 1, "url": str(secret)}]}
            )
            from_the_list = await client.post("/api/check", json={"markdown": listed})
            loopback = await client.post(
                "/api/check",
                json={"markdown": TEXT, "sources": [{"id": 1, "url": f"{server.url}/api/health"}]},
            )
    assert one_line_error(as_file_url, 422) == "source [1]: only http(s) URLs or text"
    assert one_line_error(as_path, 422) == "source [1]: only http(s) URLs or text"
    assert from_the_list.status_code == 200, from_the_list.text
    unread = from_the_list.json()
    assert {s["verdict"] for s in unread["sentences"]} == {"unverified"}
    assert unread["sentences"][0]["reason"] == (
        "source [1] could not be read: only http(s) URLs are read"
    )
    assert [s["evidence"] for s in unread["sentences"]] == [[], [], []]
    assert loopback.json()["sentences"][0]["reason"] == (
        "source [1] could not be read: refused: loopback address 127.0.0.1 "
        "(set CRAWL_ALLOW_PRIVATE=1 to allow)"
    )


async def test_bad_or_oversized_input_is_one_line() -> None:
    with running_app(app_config(), TOKENS) as server:
        async with server.client(timeout=CHECK_WAIT_S) as client:
            answers = [
                await client.post("/api/check", json=body)
                for body in (
                    {"markdown": "No citation here.", "sources": SOURCES},
                    {"markdown": TEXT},
                    {"markdown": TEXT, "sources": [{"id": 1}]},
                    {"markdown": "x" * 200_001, "sources": SOURCES},
                    {"markdown": TEXT, "sources": [{**SOURCES[0], "id": n} for n in range(1, 52)]},
                    {"markdown": TEXT, "sources": SOURCES, "other": 1},
                    {"markdown": " ".join(f"Claim {n} [1]." for n in range(301))},
                )
            ]
            too_large = await client.post(
                "/api/check",
                json={"markdown": TEXT, "sources": [{"id": 1, "text": "y" * 2_200_000}]},
            )
    assert [one_line_error(a, 422) for a in answers] == [
        "no sentence of the markdown cites a source [n]",
        'no sources: the markdown lists none as `[n] Title - URL_OR_PATH` lines; give them with "sources": [{"id": 1, "url": "https://..."}]',
        "source [1]: give either its url or its text",
        "invalid markdown: String should have at most 200000 characters",
        "invalid sources: List should have at most 50 items after validation, not 51",
        "invalid other: Extra inputs are not permitted",
        "the markdown has 301 cited sentences: at most 300 are checked at once",
    ]
    assert one_line_error(too_large, 413) == "the request body is larger than 2048 KB"


async def test_the_mcp_tool_answers_as_the_api_does(offline_env: dict[str, str]) -> None:  # noqa: F811
    server = StdioServerParameters(
        command=sys.executable, args=["-m", "starter", "mcp"], cwd=str(REPO), env=offline_env
    )
    async with stdio_client(server) as (read, write), ClientSession(read, write) as mcp:
        await mcp.initialize()
        checked = await mcp.call_tool("check_claims", {"markdown": TEXT, "sources": SOURCES})
        local = await mcp.call_tool(
            "check_claims", {"markdown": TEXT, "sources": [{"id": 1, "url": "file:///etc/hosts"}]}
        )
        uncited = await mcp.call_tool("check_claims", {"markdown": "Nothing cited."})
    assert not checked.is_error, checked.content
    result = checked.structured_content
    assert [s["verdict"] for s in result["sentences"]] == ["supported"] * 3
    assert (result["supported"], result["checked_by"]) == (3, "lexical")
    assert local.is_error and local.content[0].text.endswith(
        "source [1]: only http(s) URLs or text"
    )
    assert uncited.is_error and uncited.content[0].text.endswith(
        "no sentence of the markdown cites a source [n]"
    )
