"""Each run's row says who decided its verdict (the verdict's ``decided_by``): a debate protocol's run whose debate desk's
exhibits settled, and so never ran, is then told apart from one that debated without reading its events, so the time a
debate typically takes is not pulled down by the claims that skipped it. Runs stored before are filled in from their
last VerdictReached event.

Revision ID: 0007
Revises: 0006
"""

from __future__ import annotations

import json

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.add_column(sa.Column("decided_by", sa.Text(), nullable=True))
    conn = op.get_bind()
    found = conn.execute(
        sa.text("SELECT run_id, payload FROM events WHERE type = 'VerdictReached' ORDER BY run_id, seq")
    )  # the last of a run's wins: a resumed run that ruled again
    decided: dict[str, str] = {}
    for run_id, payload in found:
        try:
            by = (json.loads(payload).get("verdict") or {}).get("decided_by")
        except (ValueError, AttributeError):  # an unreadable payload: that run's row stays unfilled
            continue
        if isinstance(by, str):
            decided[run_id] = by
    for run_id, by in decided.items():
        conn.execute(sa.text("UPDATE runs SET decided_by = :by WHERE id = :id"), {"by": by, "id": run_id})


def downgrade() -> None:
    raise NotImplementedError("the run store is not downgraded: restore a backup taken before the upgrade")
