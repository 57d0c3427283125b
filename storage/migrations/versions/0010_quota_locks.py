"""Quotas enforced across replicas: `quota_locks`, a lease row per user's quota (its
primary key makes taking it atomic in SQLite and PostgreSQL alike), and `standing_created`, the
standing research made lately (counted until Temporal's lagging list shows them).

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-02
"""

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "quota_locks",
        sa.Column("key", sa.String(255), primary_key=True),
        sa.Column("holder", sa.String(64), nullable=False),
        sa.Column("expires_at", sa.Integer, nullable=False),
    )
    op.create_table(
        "standing_created",
        sa.Column("standing_id", sa.String(64), primary_key=True),
        sa.Column("owner", sa.String(200), nullable=False),
        sa.Column("created_at", sa.Integer, nullable=False),
    )
    op.create_index("ix_standing_created_owner", "standing_created", ["owner"])


def downgrade() -> None:
    op.drop_index("ix_standing_created_owner", table_name="standing_created")
    op.drop_table("standing_created")
    op.drop_table("quota_locks")
