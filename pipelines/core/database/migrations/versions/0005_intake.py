"""Intake: other organisations' fact-checks, read in from their ClaimReview JSON-LD (pipelines/newsroom/reviews_in.py), kept
as their reviews and matched against the claims that come in; and on each queued claim its language and the earlier
fact-check it repeats, with the similarity; and up to when each person has read their notices.

Revision ID: 0005
Revises: 0004
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "outside_reviews",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("organisation", sa.String(length=300), nullable=False),
        sa.Column("url", sa.Text(), nullable=False),
        sa.Column("claim_text", sa.Text(), nullable=False),
        sa.Column("rating", sa.String(length=300), nullable=False),
        sa.Column("published_on", sa.String(length=10), nullable=False),
        sa.Column("claimant", sa.String(length=300), nullable=False),
        sa.Column("language", sa.String(length=16), nullable=False),
        sa.Column("imported_at", sa.Float(), nullable=False),
        sa.Column("imported_by", sa.String(length=300), nullable=False),
        sa.Column("source_file", sa.String(length=300), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("outside_reviews", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_outside_reviews_organisation"), ["organisation"], unique=False)
        batch_op.create_index(batch_op.f("ix_outside_reviews_imported_at"), ["imported_at"], unique=False)
    op.create_table(
        "notice_reads",
        sa.Column("person", sa.String(length=300), nullable=False),
        sa.Column("read_until", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("person"),
    )
    with op.batch_alter_table("queue_claims", schema=None) as batch_op:
        batch_op.add_column(sa.Column("language", sa.String(length=16), nullable=True))
        batch_op.add_column(sa.Column("repeats", sa.String(length=64), nullable=True))
        batch_op.add_column(sa.Column("repeats_score", sa.Float(), nullable=True))
        batch_op.create_index(batch_op.f("ix_queue_claims_language"), ["language"], unique=False)


def downgrade() -> None:
    raise NotImplementedError("the run store is not downgraded: restore a backup taken before the upgrade")
