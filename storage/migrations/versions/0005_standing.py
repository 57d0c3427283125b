"""Runs of a standing research: which standing research a research is a run of, and
what changed since its previous run. Rows written before are no run of any.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-27
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("research") as table:
        table.add_column(sa.Column("standing_id", sa.String(200), nullable=True))
        table.add_column(sa.Column("changes", sa.JSON(), nullable=True))
        table.create_index("ix_research_standing_id", ["standing_id"])


def downgrade() -> None:
    with op.batch_alter_table("research") as table:
        table.drop_index("ix_research_standing_id")
        table.drop_column("changes")
        table.drop_column("standing_id")
