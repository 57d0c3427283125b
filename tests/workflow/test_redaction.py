"""One redaction rule for every message that may carry a configured URL or a key."""

from __future__ import annotations

import pytest

from workflows.text.redaction import redact


@pytest.mark.parametrize(
    ("text", "secret_part"),
    [
        ("searxng unreachable at http://alice:s3cret-pw@search.local:8080/search?q=x", "s3cret-pw"),
        ("proxy https://user:hunter22@llm.internal/v1 refused", "hunter22"),
        ("tavily https://api.tavily.com/search?api_key=tvly-abcdef123&q=1", "tvly-abcdef123"),
        ("brave https://x/res?q=a&token=zz-top-secret", "zz-top-secret"),
        ("sent Authorization: Bearer abcdefgh12345678", "abcdefgh12345678"),
        ("rejected key sk-proj-abcdefghijkl", "abcdefghijkl"),
        # A key in an endpoint URL's path, query or fragment, as some gateways take it.
        (
            "LLM endpoint https://gw.example/v1/sk-abc123def456ghi789jkl/chat is unavailable",
            "abc123def456ghi789jkl",
        ),
        (
            "LLM endpoint https://gw.example/key/AIzaSyD4f00bar1234567890abcdefXYZ/v1 refused",
            "AIzaSyD4f00bar1234567890",
        ),
        (
            "webhook https://hooks.example/T000/B000/Xq7Lp2Rt9Vw4Zy6Nb3Mk8Jh5 failed",
            "Xq7Lp2Rt9Vw4Zy6Nb3Mk8Jh5",
        ),
        (
            "gateway https://gw.example/t/hGfRtYuJkLpOiUyTrEwQaSdFgHjKlZxCvBnM/v1 down",
            "hGfRtYuJkLpOiUyTrEwQaSdFgHjKlZxCvBnM",
        ),
        ("https://gw.example/v1?key=AbcDef123&q=1 answered 500", "AbcDef123"),
        ("https://gw.example/v1?token=short answered 500", "short"),
        (
            "https://gw.example/v1?session=f00dfeedcafe1234beef5678 answered 500",
            "f00dfeedcafe1234beef5678",
        ),
        ("callback https://app.example/cb#access_token=ya29.a0Af-abc", "ya29.a0Af-abc"),
        ("groq key gsk_abcdefgh12345678 rejected", "abcdefgh12345678"),
        ("hugging face hf_AbCdEfGhIjKlMnOp rejected", "AbCdEfGhIjKlMnOp"),
    ],
)
def test_credentials_never_survive_a_message(text: str, secret_part: str) -> None:
    masked = redact(text)
    assert secret_part not in masked and "***" in masked


def test_a_literal_secret_is_masked_anywhere_and_plain_text_is_untouched() -> None:
    assert redact("echoed: my-api-key-123 in body", ["my-api-key-123"]) == "echoed: *** in body"
    plain = "https://example.org/page?q=rust+ownership#top took 3 s"
    assert redact(plain) == plain


@pytest.mark.parametrize(
    "url",
    [
        "https://api.example.com/openai/deployments/gpt-4o-mini-2024-07-18/chat/completions?api-version=2024-06-01",
        "https://docs.rs/tokio/1.40.0/tokio/task/fn.spawn.html",
        "https://arxiv.org/abs/2401.12345",
        "https://en.wikipedia.org/wiki/Retrieval-augmented_generation",
        "https://example.org/blog/OpenAICompatibleEndpointForTheTeamABC/",
        "http://127.0.0.1:11434/v1",
    ],
)
def test_urls_without_a_token_keep_every_segment(url: str) -> None:
    """Only what looks like a token is masked: the endpoint a message names stays recognisable."""
    assert (
        redact(f"the LLM endpoint {url} is unavailable") == f"the LLM endpoint {url} is unavailable"
    )
