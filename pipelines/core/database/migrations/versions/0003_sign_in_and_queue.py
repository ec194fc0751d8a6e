"""Sign-in (sessions, failed attempts, browser names) and the claims queue (claims, their runs, changes, comments).

These tables were made by their own code before they had a migration; a database that has them
already is given only the columns and indexes it lacks.

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa

from pipelines.core.database.migrations import bring_up

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Frozen here, not read from the code's models: later migrations change those, this one must not.
    metadata = sa.MetaData()
    tables = [
        sa.Table(
            "sign_in_sessions",
            metadata,
            sa.Column("token_digest", sa.String(64), primary_key=True),
            sa.Column("username", sa.String(200), nullable=False, index=True),
            sa.Column("created_at", sa.Float, nullable=False),
            sa.Column("expires_at", sa.Float, nullable=False),
            sa.Column("revoked_at", sa.Float),
        ),
        sa.Table(
            "sign_in_failures",
            metadata,
            sa.Column("key", sa.String(300), primary_key=True),
            sa.Column("failures", sa.Integer, nullable=False),
            sa.Column("last_at", sa.Float, nullable=False),
            sa.Column("locked_until", sa.Float, nullable=False),
        ),
        sa.Table(
            "browser_names",
            metadata,
            sa.Column("browser_digest", sa.String(64), primary_key=True),
            sa.Column("name", sa.String(200), nullable=False),
            sa.Column("updated_at", sa.Float, nullable=False),
        ),
        sa.Table(
            "queue_claims",
            metadata,
            sa.Column("id", sa.String(32), primary_key=True),
            sa.Column("text", sa.Text, nullable=False),
            sa.Column("source_url", sa.Text),
            sa.Column("appeared_on", sa.String(10)),
            sa.Column("claimant", sa.String(300), index=True),
            sa.Column("status", sa.String(16), nullable=False, index=True),
            sa.Column("assignee", sa.String(300), index=True),
            sa.Column("due_on", sa.String(10), index=True),
            sa.Column("tags", sa.Text, nullable=False),
            sa.Column("created_at", sa.Float, nullable=False, index=True),
            sa.Column("created_by", sa.String(300), nullable=False),
            sa.Column("updated_at", sa.Float, nullable=False),
            sa.Column("reviewed_verdict", sa.String(32)),
            sa.Column("review_reason", sa.Text),
            sa.Column("reviewed_by", sa.String(300)),
            sa.Column("reviewed_at", sa.Float),
            sa.Column("reviewed_run", sa.String(64)),
            sa.Column("published_at", sa.Float),
            sa.Column("published_by", sa.String(300)),
            sa.Column("claimreview", sa.Text),
        ),
        sa.Table(
            "queue_runs",
            metadata,
            sa.Column("run_id", sa.String(64), primary_key=True),
            sa.Column("claim_id", sa.String(32), sa.ForeignKey("queue_claims.id", ondelete="CASCADE"), nullable=False, index=True),
            sa.Column("linked_at", sa.Float, nullable=False),
            sa.Column("linked_by", sa.String(300), nullable=False),
        ),
        sa.Table(
            "queue_changes",
            metadata,
            sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
            sa.Column("claim_id", sa.String(32), sa.ForeignKey("queue_claims.id", ondelete="CASCADE"), nullable=False, index=True),
            sa.Column("at", sa.Float, nullable=False),
            sa.Column("by", sa.String(300), nullable=False),
            sa.Column("action", sa.String(32), nullable=False),
            sa.Column("detail", sa.Text, nullable=False),
        ),
        sa.Table(
            "comments",
            metadata,
            sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
            sa.Column("claim_id", sa.String(32), index=True),
            sa.Column("run_id", sa.String(64)),
            sa.Column("evidence_id", sa.String(200)),
            sa.Column("author", sa.String(300), nullable=False),
            sa.Column("at", sa.Float, nullable=False, index=True),
            sa.Column("text", sa.Text, nullable=False),
            sa.Index("ix_comments_run_evidence", "run_id", "evidence_id"),
        ),
    ]
    for table in tables:
        bring_up(table)


def downgrade() -> None:
    raise NotImplementedError("the run store is not downgraded: restore a backup taken before the upgrade")
