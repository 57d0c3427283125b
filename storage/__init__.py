"""The research library's storage: SQLAlchemy on SQLite or PostgreSQL, migrated with Alembic.

- `schema`: the tables (SQLAlchemy rows);
- `store`: write, list and load research; the database URL, one engine per database, migrations,
  the URL with its password masked, and database failures as Temporal should see them;
- `migrations/`: the Alembic revisions.

The activity that writes a finished research is `activities.library.save_research`.
"""
