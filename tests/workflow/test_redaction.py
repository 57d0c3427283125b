"""One redaction rule for every message that may carry a configured URL or a key."""

from __future__ import annotations

import pytest

from workflows.redaction import redact


@pytest.mark.parametrize(("text", "secret_part"), [
    ("searxng unreachable at http://alice:s3cret-pw@search.local:8080/search?q=x", "s3cret-pw"),
    ("proxy https://user:hunter22@llm.internal/v1 refused", "hunter22"),
    ("tavily https://api.tavily.com/search?api_key=tvly-abcdef123&q=1", "tvly-abcdef123"),
    ("brave https://x/res?q=a&token=zz-top-secret", "zz-top-secret"),
    ("sent Authorization: Bearer abcdefgh12345678", "abcdefgh12345678"),
    ("rejected key sk-proj-abcdefghijkl", "abcdefghijkl"),
])
def test_credentials_never_survive_a_message(text: str, secret_part: str) -> None:
    masked = redact(text)
    assert secret_part not in masked and "***" in masked


def test_a_literal_secret_is_masked_anywhere_and_plain_text_is_untouched() -> None:
    assert redact("echoed: my-api-key-123 in body", ["my-api-key-123"]) == "echoed: *** in body"
    plain = "https://example.org/page?q=rust+ownership#top took 3 s"
    assert redact(plain) == plain
