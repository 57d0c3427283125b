"""The research library's first schema: a research and its sources, claims, evidence,
clarifications and reflections.

Revision ID: 0001
Revises:
Create Date: 2026-11-23
"""

from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def _child(name: str, *columns: sa.Column[Any]) -> None:
    op.create_table(
        name,
        sa.Column(
            "research_id",
            sa.Integer,
            sa.ForeignKey("research.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("position", sa.Integer, primary_key=True),
        *columns,
    )


def upgrade() -> None:
    op.create_table(
        "research",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("workflow_id", sa.String(255), nullable=False, index=True),
        sa.Column("run_id", sa.String(64), nullable=False),
        sa.Column("query", sa.Text, nullable=False),
        sa.Column("outcome", sa.String(32), nullable=False),
        sa.Column("mode", sa.String(16), nullable=False),
        sa.Column("depth", sa.String(16), nullable=False),
        sa.Column("engine", sa.String(255), nullable=False),
        sa.Column("follow_up_of", sa.String(255)),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=False, index=True),
        sa.Column("report_markdown", sa.Text, nullable=False),
        sa.Column("plan", sa.JSON),
        sa.Column("plan_iterations", sa.Integer, nullable=False),
        sa.Column("stage_history", sa.JSON, nullable=False),
        sa.Column("loop_backs", sa.JSON, nullable=False),
        sa.Column("stats", sa.JSON, nullable=False),
        sa.Column("verification", sa.JSON),
        sa.Column("critique", sa.JSON),
        sa.Column("notes", sa.JSON, nullable=False),
        sa.UniqueConstraint("workflow_id", "run_id", name="uq_research_run"),
    )
    _child(
        "research_source",
        sa.Column("source_id", sa.Integer, nullable=False),
        sa.Column("url", sa.Text, nullable=False, index=True),
        sa.Column("title", sa.Text, nullable=False),
        sa.Column("provider", sa.String(64), nullable=False),
    )
    _child(
        "research_claim",
        sa.Column("text", sa.Text, nullable=False),
        sa.Column("source_ids", sa.JSON, nullable=False),
        sa.Column("verdict", sa.String(16), nullable=False, index=True),
        sa.Column("reason", sa.Text, nullable=False),
        sa.Column("checked_by", sa.String(16), nullable=False),
        sa.Column("original", sa.Text),
        sa.Column("removed", sa.Boolean, nullable=False),
    )
    _child(
        "research_evidence",
        sa.Column("source_id", sa.Integer, nullable=False),
        sa.Column("passage_position", sa.Integer, nullable=False),
        sa.Column("text", sa.Text, nullable=False),
    )
    _child(
        "research_clarification",
        sa.Column("question", sa.Text, nullable=False),
        sa.Column("answer", sa.Text),
    )
    _child(
        "research_reflection",
        sa.Column("decision", sa.String(16), nullable=False),
        sa.Column("reasoning", sa.Text, nullable=False),
        sa.Column("suggested_changes", sa.JSON, nullable=False),
    )


def downgrade() -> None:
    for table in (
        "research_reflection",
        "research_clarification",
        "research_evidence",
        "research_claim",
        "research_source",
        "research",
    ):
        op.drop_table(table)
