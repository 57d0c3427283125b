"""The local corpus: the `local` search provider's documents in a SQLite FTS5 index.

- `index`: `LocalCorpus` (search, read, the index kept fresh, `refresh()` for `starter index`)
  and `open_corpus`, the process-wide instance per corpus;
- `reader`: a folder's file read as untrusted (regular files inside the folder, a byte cap) and
  parsed in an extraction child; `display_name` shows its path safely;
- `documents`: markdown, HTML and text files to documents and their sections, cleaned of controls;
- `binary`: PDF (one document per page) and Word `.docx` files (streamed, capped);
- `store`: the SQLite schema and the short transaction a refresh writes in;
- `ranking`: how sections are ranked and documents scored (field weights, feedback, aggregation);
- `stdlib`: the default corpus, the interpreter's own documentation read from source with `ast`;
- `snippets`: the sentence of a document a search hit shows.
"""

from activities.corpus.index import LocalCorpus, open_corpus

__all__ = ["LocalCorpus", "open_corpus"]
