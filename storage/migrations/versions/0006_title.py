"""A title of the person's own for a research. Rows
written before have none: the library shows their question, as it always did.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-28
"""

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("research") as table:
        table.add_column(sa.Column("title", sa.String(200), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("research") as table:
        table.drop_column("title")
