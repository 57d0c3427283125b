"""Which steps a reflection judged, when independent steps were researched at once.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-23
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("research_reflection") as table:
        table.add_column(sa.Column("steps", sa.JSON, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("research_reflection") as table:
        table.drop_column("steps")
