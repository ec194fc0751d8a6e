"""The run store's named migrations on SQLite and PostgreSQL: a new database, and databases made before migrations."""

from __future__ import annotations

import json
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import sqlalchemy as sa

from pipelines.core.database import migrations
from pipelines.core.database.tables import desk_schema
from pipelines.core.events import RunStarted, VerdictOverridden
from pipelines.record.store import RunStore
from tests.stores import store_url  # noqa: F401  (the fixture)

LATER_COLUMNS = {  # what the store added to `runs` after the foundation, as the column adder before migrations did
    "model_seconds": "FLOAT",
    "event_count": "INTEGER",
    "attempts": "INTEGER",
    "owner": "VARCHAR(200)",
    "heartbeat_at": "FLOAT",
    "checker_verdict": "VARCHAR(64)",
    "checker_note": "TEXT",
    "checker_by": "VARCHAR(200)",
    "origin": "VARCHAR(200)",
    "checker_at": "FLOAT",
    "cached_calls": "INTEGER",
    "stop_reason": "TEXT",
    "source_run": "VARCHAR(64)",
    "started_by": "VARCHAR(200)",
}


FOUNDATION = Path(__file__).with_name("foundation_schema.sql")  # the DDL the foundation's store ran
INTEGER_KEY = {"sqlite": "INTEGER", "postgresql": "SERIAL"}  # how SQLAlchemy wrote events.id on each


def foundation_statements(engine: sa.Engine) -> list[str]:
    """The store's tables as the foundation made them (4ef6597:pipelines/store.py), frozen as the SQL it ran."""
    text = FOUNDATION.read_text(encoding="utf-8").replace("{integer_key}", INTEGER_KEY[engine.dialect.name])
    lines = "\n".join(line for line in text.splitlines() if not line.startswith("--"))
    return [statement.strip() for statement in lines.split(";") if statement.strip()]


def old_database(url: str, *, later_columns: bool) -> None:
    """A database made before migrations, holding one run with one event; ``later_columns``: as the column adder left it."""
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        for statement in foundation_statements(engine):
            conn.execute(sa.text(statement))
        conn.execute(
            sa.text(
                "INSERT INTO runs (id, claim, protocol, status, verdict, created_at, finished_at, config, app_version, "
                "model_calls, tokens_in, tokens_out) VALUES ('old', 'Old claim', 'single', 'completed', 'SUPPORTS', 1.0, 2.0, "
                "'{}', '0.1.0', 2, 10, 5)"
            )
        )
        payload = '{"type": "RunStarted", "run_id": "old", "claim": "Old claim", "protocol": "single", "config": {}, "at": 1.0}'
        conn.execute(
            sa.text("INSERT INTO events (run_id, seq, type, at, payload) VALUES ('old', 1, 'RunStarted', 1.0, :p)"), {"p": payload}
        )
        if later_columns:
            for name, kind in LATER_COLUMNS.items():  # columns, but not their indexes: what the adder missed
                conn.execute(sa.text(f'ALTER TABLE runs ADD COLUMN "{name}" {kind}'))
    engine.dispose()


def indexes(url: str) -> dict[str, set[tuple[str, tuple[str, ...]]]]:
    """Each table's indexes, as (name, columns)."""
    engine = sa.create_engine(url)
    inspector = sa.inspect(engine)
    found = {
        t: {(str(i["name"]), tuple(str(c) for c in i["column_names"])) for i in inspector.get_indexes(t)}
        for t in inspector.get_table_names()
    }
    engine.dispose()
    return found


def assert_at_head_with_the_desk_tables(url: str) -> None:
    engine = sa.create_engine(url)
    with engine.connect() as conn:
        assert migrations.applied(conn) == migrations.head()
        assert migrations.differences(conn, desk_schema()) == [], "the migrations build exactly the tables the desk uses"
    engine.dispose()
    present = indexes(url)
    for table in desk_schema().sorted_tables:
        for index in table.indexes:
            assert (index.name, tuple(c.name for c in index.columns)) in present[table.name], f"{table.name}: no {index.name}"


def opened_at_head(url: str, query: str) -> list[tuple[object, ...]]:
    """Open the store on an older database (it migrates), check it is at head with the desk's tables, and read ``query``."""
    RunStore(url).engine.dispose()
    assert_at_head_with_the_desk_tables(url)
    engine = sa.create_engine(url)
    with engine.connect() as conn:
        rows = [tuple(row) for row in conn.execute(sa.text(query)).all()]
    engine.dispose()
    return rows


def test_a_new_database_is_built_to_exactly_the_store_tables(store_url: str) -> None:  # noqa: F811
    RunStore(store_url).engine.dispose()
    assert_at_head_with_the_desk_tables(store_url)
    RunStore(store_url).engine.dispose()  # opening again finds nothing to do
    assert_at_head_with_the_desk_tables(store_url)


@pytest.mark.parametrize("later_columns", [False, True], ids=["foundation", "columns-without-indexes"])
def test_a_database_made_before_migrations_gets_its_columns_and_indexes(store_url: str, later_columns: bool) -> None:  # noqa: F811
    old_database(store_url, later_columns=later_columns)
    store = RunStore(store_url)
    assert_at_head_with_the_desk_tables(store_url)
    run = store.get_run("old")
    assert run is not None and run.verdict == "SUPPORTS" and run.event_count == 0 and run.attempts == 1
    assert isinstance(store.events("old")[0], RunStarted)
    store.append("old", VerdictOverridden(label="REFUTES", by="Ana"))
    assert store.get_run("old").final_verdict == "REFUTES"  # type: ignore[union-attr]
    store.engine.dispose()


def test_sign_in_and_queue_tables_made_by_their_own_code_before_migration_0003_are_brought_up(store_url: str) -> None:  # noqa: F811
    """Before 0003 the sign-in and queue code made its tables itself: a desk may have them at an older shape, with rows."""
    engine = sa.create_engine(store_url)
    with engine.begin() as conn:
        migrations.command.upgrade(migrations.alembic_config(conn), "0002")
    built = set(sa.inspect(engine).get_table_names())
    later = {
        "queue_publications",
        "outside_reviews",
        "notice_reads",
    }  # made by later migrations (0004, 0005), never by the code before 0003
    own = [t for t in desk_schema().sorted_tables if t.name not in built | later]
    assert {t.name for t in own} >= {"sign_in_sessions", "queue_claims", "comments"}
    for table in own:
        table.create(engine)
    with engine.begin() as conn:  # an older queue: no published ClaimReview column, no index on the due day
        conn.execute(sa.text("DROP INDEX ix_queue_claims_due_on"))
        conn.execute(sa.text("ALTER TABLE queue_claims DROP COLUMN claimreview"))
        conn.execute(sa.text("DROP INDEX ix_queue_claims_language"))  # added by 0005, with its columns
        for column in ("publish_version", "first_published_at", "record_seen_at", "withdrawn", "language", "repeats", "repeats_score"):
            conn.execute(sa.text(f"ALTER TABLE queue_claims DROP COLUMN {column}"))
        conn.execute(
            sa.text(
                "INSERT INTO queue_claims (id, text, status, tags, created_at, created_by, updated_at) "
                "VALUES ('c1', 'A queued claim', 'new', '', 1.0, 'Ana', 1.0)"
            )
        )
    engine.dispose()
    assert opened_at_head(store_url, "SELECT text, claimreview FROM queue_claims") == [("A queued claim", None)]


def test_the_memory_and_evaluation_tables_their_stores_built_before_migration_0006_keep_their_rows(store_url: str) -> None:  # noqa: F811
    """Before 0006 the evidence memory and past evaluations built their own tables when first opened (create_all)."""
    engine = sa.create_engine(store_url)
    with engine.begin() as conn:
        migrations.command.upgrade(migrations.alembic_config(conn), "0005")
    for name in ("evidence_memory", "evaluations"):
        desk_schema().tables[name].create(engine)  # as the store's own create_all made it
    with engine.begin() as conn:
        conn.execute(
            sa.text(
                "INSERT INTO evaluations (id, created_at, dataset, split, protocol, backend, labels, claims, failed, accuracy, "
                "macro_f1, model_calls, tokens_in, tokens_out, seconds, report) VALUES ('e1', 1.0, 'check-covid', 'dev', 'desk', "
                "'fake', 'binary', 10, 0, 0.7, 0.69, 20, 100, 10, 3.0, '{}')"
            )
        )
    engine.dispose()
    assert opened_at_head(store_url, "SELECT id, accuracy FROM evaluations") == [("e1", 0.7)]


def test_each_migration_is_one_file_named_for_its_revision_after_the_one_before() -> None:
    files = sorted((migrations.FOLDER / "versions").glob("*.py"))
    assert files, "no migration"
    previous = None
    for path in files:
        source = path.read_text(encoding="utf-8")
        number = re.match(r"(\d{4})_[a-z0-9_]+\.py$", path.name)
        assert number, f"{path.name}: name it NNNN_what_it_adds.py"
        source = source.replace("'", '"')
        assert f'revision = "{number.group(1)}"' in source, f"{path.name}: its revision is its number"
        assert (f'down_revision = "{previous}"' if previous else "down_revision = None") in source, f"{path.name}: follows {previous}"
        previous = number.group(1)
    assert previous == migrations.head()


def test_stores_opening_a_new_sqlite_database_at_once_build_it_once(tmp_path: Path) -> None:
    """The app and the command line may open a new database together: SQLite's DDL is not transactional, so they take turns."""
    url = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    with ThreadPoolExecutor(6) as pool:
        stores = list(pool.map(lambda _: RunStore(url), range(6)))
    for store in stores:
        store.engine.dispose()
    assert_at_head_with_the_desk_tables(url)


def test_runs_stored_before_migration_0007_get_who_decided_their_verdict_from_their_events(store_url: str) -> None:  # noqa: F811
    engine = sa.create_engine(store_url)
    with engine.begin() as conn:
        migrations.command.upgrade(migrations.alembic_config(conn), "0006")
        for run_id, by in (("settled", "desk's exhibits, which settle the claim"), ("judged", "judge"), ("none", None)):
            conn.execute(
                sa.text(
                    "INSERT INTO runs (id, claim, protocol, status, created_at, config, app_version, model_calls, tokens_in, tokens_out) "
                    "VALUES (:id, 'A claim', 'radar', 'completed', 1.0, '{}', '0.1.0', 0, 0, 0)"
                ),
                {"id": run_id},
            )
            if by is not None:  # a resumed run ruled twice: the last ruling is the run's
                for seq, who in ((1, "an earlier ruling"), (2, by)):
                    payload = json.dumps({"type": "VerdictReached", "verdict": {"label": "SUPPORTS", "decided_by": who}})
                    conn.execute(
                        sa.text("INSERT INTO events (run_id, seq, type, at, payload) VALUES (:r, :s, 'VerdictReached', 1.0, :p)"),
                        {"r": run_id, "s": seq, "p": payload},
                    )
        conn.execute(sa.text("INSERT INTO events (run_id, seq, type, at, payload) VALUES ('none', 1, 'VerdictReached', 1.0, 'not json')"))
    engine.dispose()
    assert sorted(opened_at_head(store_url, "SELECT id, decided_by FROM runs")) == [
        ("judged", "judge"),
        ("none", None),
        ("settled", "desk's exhibits, which settle the claim"),
    ]
