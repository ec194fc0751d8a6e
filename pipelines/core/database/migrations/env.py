"""Alembic's entry for the desk's database: migrate the connection ``pipelines.core.database.migrations`` hands over."""

from __future__ import annotations

from alembic import context

connection = context.config.attributes.get("connection")
if connection is None:
    raise RuntimeError("the run store migrates itself when it opens (pipelines.core.database.migrations.upgrade); there is no alembic.ini")
context.configure(
    connection=connection,
    target_metadata=context.config.attributes.get("target_metadata"),
    render_as_batch=True,  # SQLite changes most columns only by copying the table: Alembic's batch mode does that
    compare_type=True,
)
with context.begin_transaction():
    context.run_migrations()
