"""The desk's settings and their audit list, each event's link in the hash chain, what a run spent.

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "desk_settings",
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("value", sa.Text(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("changed_by", sa.String(length=200), nullable=False),
        sa.Column("changed_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("name"),
    )
    op.create_table(
        "desk_settings_changes",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("at", sa.Float(), nullable=False),
        sa.Column("by", sa.String(length=200), nullable=False),
        sa.Column("setting", sa.String(length=100), nullable=False),
        sa.Column("before", sa.Text(), nullable=False),
        sa.Column("after", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("desk_settings_changes", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_desk_settings_changes_at"), ["at"], unique=False)

    with op.batch_alter_table("events", schema=None) as batch_op:
        batch_op.add_column(sa.Column("chain", sa.String(length=64), nullable=True))

    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.add_column(sa.Column("spent", sa.Float(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.drop_column("spent")

    with op.batch_alter_table("events", schema=None) as batch_op:
        batch_op.drop_column("chain")

    with op.batch_alter_table("desk_settings_changes", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_desk_settings_changes_at"))

    op.drop_table("desk_settings_changes")
    op.drop_table("desk_settings")
