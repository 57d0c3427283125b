"""Alembic's entry point for the research library: migrate the connection it is handed.

`storage.store.migrate` passes an open connection (so the worker, the starter and
tests migrate whatever database RESEARCH_DB_URL names); batch mode lets later revisions alter
tables on SQLite, which cannot ALTER most things in place.
"""

from alembic import context

from storage import web_tables  # noqa: F401 - the web app's own table, in the same metadata
from storage.schema import Base

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=Base.metadata, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
