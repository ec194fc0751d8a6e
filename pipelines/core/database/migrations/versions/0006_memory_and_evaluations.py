"""The evidence memory and past evaluations join the migrations: until now each store built its own table when first
opened (``create_all``), outside the schema the migrations keep. A database where they were built that way keeps them
and its rows; one where they were not gets them.

Revision ID: 0006
Revises: 0005
"""

from __future__ import annotations

import sqlalchemy as sa

from pipelines.core.database.migrations import bring_up

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    metadata = sa.MetaData()
    tables = [
        sa.Table(
            "evidence_memory",
            metadata,
            sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
            sa.Column("key", sa.String(length=512), nullable=False, unique=True, index=True),
            sa.Column("source", sa.String(length=16), nullable=False),
            sa.Column("title", sa.Text(), nullable=False),
            sa.Column("text", sa.Text(), nullable=False),
            sa.Column("url", sa.Text(), nullable=True),
            sa.Column("corpus", sa.String(length=64), nullable=True),
            sa.Column("doc_id", sa.String(length=256), nullable=True),
            sa.Column("passage_index", sa.Integer(), nullable=True),
            sa.Column("query", sa.Text(), nullable=False),
            sa.Column("claim", sa.Text(), nullable=False),
            sa.Column("topic", sa.Text(), nullable=False),
            sa.Column("entities", sa.Text(), nullable=False),
            sa.Column("embedding", sa.LargeBinary(), nullable=False),
            sa.Column("run_id", sa.String(length=64), nullable=False),
            sa.Column("created_at", sa.Float(), nullable=False, index=True),
            sa.Column("last_used_at", sa.Float(), nullable=False),
            sa.Column("uses", sa.Integer(), nullable=False),
        ),
        sa.Table(
            "evaluations",
            metadata,
            sa.Column("id", sa.String(length=96), primary_key=True),
            sa.Column("created_at", sa.Float(), nullable=False, index=True),
            sa.Column("dataset", sa.String(length=200), nullable=False),
            sa.Column("split", sa.String(length=32), nullable=False),
            sa.Column("protocol", sa.String(length=64), nullable=False, index=True),
            sa.Column("backend", sa.String(length=64), nullable=False),
            sa.Column("labels", sa.String(length=16), nullable=False),
            sa.Column("claims", sa.Integer(), nullable=False),
            sa.Column("failed", sa.Integer(), nullable=False),
            sa.Column("accuracy", sa.Float(), nullable=False),
            sa.Column("macro_f1", sa.Float(), nullable=False),
            sa.Column("ece", sa.Float(), nullable=True),
            sa.Column("evidence_recall", sa.Float(), nullable=True),
            sa.Column("model_calls", sa.Integer(), nullable=False),
            sa.Column("tokens_in", sa.Integer(), nullable=False),
            sa.Column("tokens_out", sa.Integer(), nullable=False),
            sa.Column("seconds", sa.Float(), nullable=False),
            sa.Column("report", sa.Text(), nullable=False),
        ),
    ]
    for table in tables:
        bring_up(table)


def downgrade() -> None:
    raise NotImplementedError("the run store is not downgraded: restore a backup taken before the upgrade")
