"""The web app's signed-out sessions: the table every replica reads before it honours
a session cookie, made by this migration like every other table of the library. Until now the web
app made it itself (`create_all`), outside the migrations; a library where it did already has the
table, which is left as it is.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-27
"""

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    if "web_revoked_sessions" in sa.inspect(op.get_bind()).get_table_names():
        return  # made by the web app before this revision
    op.create_table(
        "web_revoked_sessions",
        sa.Column("session_id", sa.String(64), primary_key=True),
        sa.Column("expires_at", sa.Integer, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("web_revoked_sessions")
