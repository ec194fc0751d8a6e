"""Past evaluations, kept twice: a JSON report (and a per-claim CSV) in the data folder, and a row in the run database.

The database row holds the headline figures for listing and comparing; the full report
(every claim's row, pointing at its stored run) is kept beside them as JSON, so an
evaluation made on one machine can be compared on another that shares the database.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from pipelines.core.database import migrations
from pipelines.core.database.tables import EvaluationRow
from pipelines.core.text.safety import csv_cell
from pipelines.eval.harness import EvalReport


class EvalStore:
    """Evaluations in the run database (the same SQLite file or PostgreSQL server as the runs)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        migrations.upgrade(engine)  # its table is the desk database's (pipelines/core/database/tables.py)

    def save(self, report: EvalReport) -> None:
        # The headline columns the report holds under the same name, then those it holds elsewhere.
        same_name = {c.key: getattr(report, c.key) for c in EvaluationRow.__table__.columns if c.key in EvalReport.model_fields}
        cost = report.cost
        with Session(self.engine) as s, s.begin():
            s.merge(
                EvaluationRow(
                    **same_name,
                    ece=report.calibration.ece,
                    model_calls=cost.calls,
                    tokens_in=cost.tokens_in,
                    tokens_out=cost.tokens_out,
                    seconds=cost.wall_seconds,
                    report=report.model_dump_json(),
                )
            )

    def get(self, evaluation_id: str) -> EvalReport | None:
        with Session(self.engine) as s:
            row = s.get(EvaluationRow, evaluation_id)
            return EvalReport.model_validate_json(row.report) if row else None

    def recent(self, limit: int = 100) -> list[EvalReport]:
        """The most recent evaluations first."""
        with Session(self.engine) as s:
            rows = s.scalars(select(EvaluationRow).order_by(EvaluationRow.created_at.desc()).limit(limit)).all()
            return [EvalReport.model_validate_json(r.report) for r in rows]

    def delete(self, evaluation_id: str) -> bool:
        with Session(self.engine) as s, s.begin():
            row = s.get(EvaluationRow, evaluation_id)
            if row is None:
                return False
            s.delete(row)
            return True


def write_report_files(report: EvalReport, folder: Path) -> tuple[Path, Path]:
    """``<id>.json`` (the whole report) and ``<id>.claims.csv`` (one row per claim) in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    json_path = folder / f"{report.id}.json"
    json_path.write_text(json.dumps(report.model_dump(mode="json"), indent=1), encoding="utf-8")
    csv_path = folder / f"{report.id}.claims.csv"
    csv_path.write_text(claims_csv(report), encoding="utf-8")
    return json_path, csv_path


def claims_csv(report: EvalReport) -> str:
    buffer = io.StringIO()
    rows = [row.flat_row() for row in report.rows]
    writer = csv.DictWriter(buffer, fieldnames=list(rows[0]) if rows else ["id"], lineterminator="\r\n")  # RFC 4180; "\r" is quoted too
    writer.writeheader()
    for row in rows:
        writer.writerow({name: csv_cell(value) for name, value in row.items()})  # formulas stay text
    return buffer.getvalue()
