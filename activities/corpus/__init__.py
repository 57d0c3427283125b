"""The local corpus: the `local` search provider's documents in a SQLite FTS5 index.

- `index`: `LocalCorpus` (search, read, the index kept up to date) and `open_corpus`, the
  process-wide instance per corpus;
- `documents`: markdown, HTML and text files to documents;
- `stdlib`: the default corpus, the interpreter's own documentation read from source with `ast`;
- `snippets`: the sentence of a document a search hit shows.
"""

from activities.corpus.index import LocalCorpus, open_corpus

__all__ = ["LocalCorpus", "open_corpus"]
