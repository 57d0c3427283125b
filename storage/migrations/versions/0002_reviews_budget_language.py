"""A research's reviews, refinements, budget and language.

Reviews and refinements were only in Temporal's copy of the result until now: a stored research
read back from the library lost them. Rows written before this revision read back with none.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-23
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("research") as table:
        table.add_column(sa.Column("reviews", sa.JSON, nullable=True))
        table.add_column(sa.Column("refinements", sa.JSON, nullable=True))
        table.add_column(sa.Column("budget", sa.JSON, nullable=True))
        table.add_column(sa.Column("language", sa.String(16), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("research") as table:
        for column in ("language", "budget", "refinements", "reviews"):
            table.drop_column(column)
