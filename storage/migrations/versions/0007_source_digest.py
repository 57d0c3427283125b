"""The fingerprint of each source's text as read: a standing research tells a
source whose text changed from one read again unchanged, and an identical upload under another
name from a new document. Rows written before have none: their sources compare by URL only.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-27
"""

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("research_source") as table:
        table.add_column(sa.Column("digest", sa.String(64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("research_source") as table:
        table.drop_column("digest")
