"""Who each research belongs to.
Rows written before belong to `local`, the one user when access control is off.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-24
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("research") as table:
        table.add_column(sa.Column("owner", sa.String(200), nullable=False, server_default="local"))
        table.create_index("ix_research_owner", ["owner"])


def downgrade() -> None:
    with op.batch_alter_table("research") as table:
        table.drop_index("ix_research_owner")
        table.drop_column("owner")
