"""Runs, events and journal as they stood when migrations began; a database made before then is brought up to them.

Revision ID: 0001
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa

from pipelines.core.database.migrations import bring_up

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Frozen here, not read from the store's models: later migrations change those, this one must not.
    metadata = sa.MetaData()
    runs = sa.Table(
        "runs",
        metadata,
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("claim", sa.Text, nullable=False),
        sa.Column("protocol", sa.String(64), nullable=False, index=True),
        sa.Column("status", sa.String(16), nullable=False, index=True),
        sa.Column("verdict", sa.String(64)),
        sa.Column("confidence", sa.Float),
        sa.Column("created_at", sa.Float, nullable=False, index=True),
        sa.Column("finished_at", sa.Float),
        sa.Column("config", sa.Text, nullable=False),
        sa.Column("app_version", sa.String(32), nullable=False),
        sa.Column("model_calls", sa.Integer, nullable=False),
        sa.Column("tokens_in", sa.Integer, nullable=False),
        sa.Column("tokens_out", sa.Integer, nullable=False),
        # added for durable runs, the verdict card and live cost, spend limits, re-runs and shared desks
        sa.Column("model_seconds", sa.Float),
        sa.Column("event_count", sa.Integer),
        sa.Column("attempts", sa.Integer),
        sa.Column("owner", sa.String(200)),
        sa.Column("heartbeat_at", sa.Float),
        sa.Column("checker_verdict", sa.String(64), index=True),
        sa.Column("checker_note", sa.Text),
        sa.Column("checker_by", sa.String(200)),
        sa.Column("origin", sa.String(200)),
        sa.Column("checker_at", sa.Float),
        sa.Column("cached_calls", sa.Integer),
        sa.Column("stop_reason", sa.Text),
        sa.Column("source_run", sa.String(64), index=True),
        sa.Column("started_by", sa.String(200)),
    )
    events = sa.Table(
        "events",
        metadata,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("run_id", sa.String(64), sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False, index=True),
        sa.Column("seq", sa.Integer, nullable=False),
        sa.Column("type", sa.String(64), nullable=False),
        sa.Column("at", sa.Float, nullable=False),
        sa.Column("payload", sa.Text, nullable=False),
        sa.UniqueConstraint("run_id", "seq"),
    )
    journal = sa.Table(
        "journal",
        metadata,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("run_id", sa.String(64), sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False, index=True),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("key", sa.String(128), nullable=False),
        sa.Column("payload", sa.Text, nullable=False),
        sa.Column("at", sa.Float, nullable=False),
    )
    for table in (runs, events, journal):
        bring_up(table)


def downgrade() -> None:
    raise NotImplementedError("the run store is not downgraded: restore a backup taken before the upgrade")
