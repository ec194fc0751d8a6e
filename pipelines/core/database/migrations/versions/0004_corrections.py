"""Corrections of published fact-checks: each claim's publish version (a compare-and-set for publish, correct, confirm and
unpublish), the day it was first published, when its record was last accounted for, the "withdrawn" notice its address
serves after unpublishing; and queue_publications, every version its address served.

Revision ID: 0004
Revises: 0003
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "queue_publications",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("claim_id", sa.String(length=32), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("at", sa.Float(), nullable=False),
        sa.Column("by", sa.String(length=300), nullable=False),
        sa.Column("action", sa.String(length=16), nullable=False),
        sa.Column("note", sa.Text(), nullable=False),
        sa.Column("document", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(["claim_id"], ["queue_claims.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("claim_id", "version"),
    )
    with op.batch_alter_table("queue_publications", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_queue_publications_claim_id"), ["claim_id"], unique=False)

    with op.batch_alter_table("queue_claims", schema=None) as batch_op:
        batch_op.add_column(sa.Column("publish_version", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("first_published_at", sa.Float(), nullable=True))
        batch_op.add_column(sa.Column("record_seen_at", sa.Float(), nullable=True))
        batch_op.add_column(sa.Column("withdrawn", sa.Text(), nullable=True))
    # A claim published before this migration: its first publication is the one it has, its record seen then.
    op.execute("UPDATE queue_claims SET first_published_at = published_at, record_seen_at = published_at WHERE published_at IS NOT NULL")


def downgrade() -> None:
    raise NotImplementedError("the run store is not downgraded: restore a backup taken before the upgrade")
