"""The text the search index keeps of one user's documents is bounded
(UPLOAD_QUOTA_TEXT_CHARS): a document past it is skipped with its reason, the others are found,
and deleting one makes room. Real files, the real index."""

from __future__ import annotations

from pathlib import Path

from activities.corpus import open_corpus, uploads

WORDS = ["quokka", "wombat", "numbat", "bilby"]


def _document(word: str, chars: int) -> bytes:
    line = f"The {word} census counted animals across the island reserves. "
    return (f"# {word.title()} census\n\n" + line * (chars // len(line))).encode()


def _finds(corpus: object, word: str) -> bool:
    return any(word in hit.title.lower() for hit in corpus.search(f"{word} census"))  # type: ignore[attr-defined]


def test_a_document_past_the_users_text_limit_is_skipped_with_its_reason(tmp_path: Path) -> None:
    root, index = tmp_path / "uploads", tmp_path / "index"
    saved = [uploads.save(root, "alice", f"{w}.md", _document(w, 3_000)) for w in WORDS]
    corpus = open_corpus(uploads.owner_folder(root, "alice"), index, max_text_chars=7_500)
    found = [w for w in WORDS if _finds(corpus, w)]
    assert len(found) == 2, found  # two of 3,000 characters fit in 7,500; the others do not
    skipped = corpus.skipped()
    assert len(skipped) == 2 and all("7,500 characters" in why for _, why in skipped)
    gone = next(s for s, w in zip(saved, WORDS, strict=True) if w == found[0])
    uploads.delete(root, "alice", gone.id)
    again = uploads.save(root, "alice", "again.md", _document("dingo", 3_000))
    corpus.refresh()
    assert _finds(corpus, "dingo"), again
