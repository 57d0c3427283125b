"""Where a research searched (the request's `sources`: configured, web, documents or both), so
"Research again on a schedule" asks the same. Rows written before have none: they
read as `configured`, the default they were started with unless the person chose otherwise.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-27
"""

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("research") as table:
        table.add_column(sa.Column("searched", sa.String(16), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("research") as table:
        table.drop_column("searched")
