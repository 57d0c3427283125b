"""A paper's metadata on its source row (a `--sources papers` research): DOI, arXiv id, authors,
year, venue, how much was read, retraction, kind. One JSON column, null for a web page or a
document: the reference exports and the sources lists read a stored paper as the paper it is.

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-02
"""

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("research_source") as table:
        table.add_column(sa.Column("paper", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("research_source") as table:
        table.drop_column("paper")
