"""Versions of a report: a finished research's section revised with a person's feedback
(`revise ID --section N`), each version the whole report as it then read, so every earlier version
stays readable. Version 1 is the research row's own report.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-03
"""

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "research_revision",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "research_id",
            sa.Integer(),
            sa.ForeignKey("research.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("section", sa.Integer(), nullable=False),
        sa.Column("heading", sa.Text(), nullable=False),
        sa.Column("feedback", sa.Text(), nullable=False),
        sa.Column("report_markdown", sa.Text(), nullable=False),
        sa.Column("claims", sa.JSON(), nullable=False),
        sa.Column("verification", sa.JSON(), nullable=True),
        sa.Column("section_verification", sa.JSON(), nullable=False),
        sa.Column("engine", sa.String(255), nullable=False),
        sa.Column("revised_by", sa.String(600), nullable=False, unique=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("research_id", "version", name="uq_revision_version"),
    )
    op.create_index("ix_research_revision_research_id", "research_revision", ["research_id"])


def downgrade() -> None:
    op.drop_index("ix_research_revision_research_id", table_name="research_revision")
    op.drop_table("research_revision")
