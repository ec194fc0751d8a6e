"""Where a model's desk calibration is found and kept: the shipped defaults, and the desk's own versions in its data folder.

A calibration maps a claim's stance features to p(supported) for one model and one stance
question (``desk.reader``). The package ships read-only defaults (``pipelines/calibration/data/
KEY.json``). A desk fits its own (``python -m pipelines calibrate``, or the Calibrate section of
the Benchmark page) and keeps every version in its data folder, ``calibrations/KEY/<time>.json``,
with a log of which one is in use (``choices.jsonl``): the newest unless an editor rolled back.
The one in use wins over the shipped one, which stays the fallback.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import tempfile
import time
from dataclasses import asdict, dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from pipelines.core.errors import DebateDeskError

SHIPPED_PACKAGE = "pipelines.calibration.data"
SHIPPED = "shipped"  # what the choice log calls the package's default
FITTED_DEFAULTS: dict[str, object] = {
    "reader": "separate",
    "negation": False,
    "shots": 0,
}  # what a calibration that does not record them was fitted with


class CalibrationFileError(DebateDeskError):
    """A calibration that cannot be read or kept; the message names the file and what to do."""


@dataclass(frozen=True)
class Calibration:
    """A logistic map from stance features to p(supported), fitted for one model and one prompt."""

    name: str
    model: str
    bias: float
    weights: dict[str, float]
    decide_at: float
    prompt_sha: str = ""
    fitted_on: str = ""
    settings: dict[str, Any] = field(default_factory=dict)

    def apply(self, features: dict[str, float]) -> float:
        z = self.bias + sum(w * features.get(name, 0.0) for name, w in self.weights.items())
        return 1.0 / (1.0 + math.exp(-z)) if z > -700 else 0.0

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Calibration:
        return cls(
            name=str(data["name"]),
            model=str(data["model"]),
            bias=float(data["bias"]),
            weights={str(k): float(v) for k, v in data["weights"].items()},
            decide_at=float(data["decide_at"]),
            prompt_sha=str(data.get("prompt_sha", "")),
            fitted_on=str(data.get("fitted_on", "")),
            settings=dict(data.get("settings", {})),
        )


def calibration_key(model_name: str, reader: str = "separate") -> str:
    """The name a model's calibration is kept under: its name, lower case, without a folder or a .gguf suffix.

    Each stance question (desk.reader) has its own fit: the separate question's key is the
    model's name, the others add ``--contrast`` or ``--both``. A name with characters a file
    name cannot hold (an endpoint's ``org/model:tag``) has them replaced by ``_``.
    """
    name = Path(model_name).name.lower()
    stem = name[: -len(".gguf")] if name.endswith(".gguf") else name
    stem = "".join(c if c.isalnum() or c in "._-" else "_" for c in stem).strip(".") or "model"
    return stem if reader == "separate" else f"{stem}--{reader}"


def load_shipped(model_name: str, reader: str = "separate") -> Calibration | None:
    """The calibration shipped with the package for ``model_name`` and ``reader`` (None if none was)."""
    path = resources.files(SHIPPED_PACKAGE).joinpath(f"{calibration_key(model_name, reader)}.json")
    if not path.is_file():
        return None
    return Calibration.from_json(json.loads(path.read_text(encoding="utf-8")))


def load_calibration(model_name: str, reader: str = "separate", data_dir: Path | None = None) -> Calibration | None:
    """The calibration desk uses for ``model_name`` and ``reader``: the desk's own in use, else the shipped one, else None."""
    if data_dir is not None:
        mine = CalibrationShelf(data_dir).in_use(calibration_key(model_name, reader))
        if mine is not None:
            return mine.calibration
    return load_shipped(model_name, reader)


def calibration_origin(name: str) -> str:
    """Where the calibration called ``name`` comes from, in words a verdict card can show."""
    stem = name.rpartition("@")[2]
    if len(stem) >= 15 and stem[:8].isdigit() and stem[8] == "T":
        return f"fitted by this desk on {stem[:4]}-{stem[4:6]}-{stem[6:8]} (python -m pipelines calibrate)"
    return "shipped with DebateDesk (fitted on Check-COVID train claims)"


def prompt_sha(reader: str = "separate") -> str:
    """A short hash of ``reader``'s stance prompt: a calibration fitted on another prompt no longer fits."""
    names = {
        "separate": ("desk_stance.md",),
        "contrast": ("desk_contrast.md",),
        "both": ("desk_stance.md", "desk_contrast.md"),
        "verdict": ("desk_verdict.md",),
    }[reader]
    text = "".join(resources.files("pipelines.prompts").joinpath(name).read_text(encoding="utf-8") for name in names)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def belief_prompt_sha() -> str:
    """A short hash of the belief prompt: a measure of how well the belief told the sides apart holds for this prompt only."""
    text = resources.files("pipelines.prompts").joinpath("belief.md").read_text(encoding="utf-8")
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def calibration_mismatch(calibration: Calibration | None, **run: object) -> str:
    """Why ``calibration`` may not fit this run ('' when it was fitted for these settings and this prompt).

    ``run`` holds the run's desk settings that the calibration records (reader, exhibits,
    orders, unit, negation, shots); a setting the calibration did not record is taken at its default.
    """
    if calibration is None:
        return ""
    fitted = {**FITTED_DEFAULTS, **calibration.settings}
    differs = [f"{name} {fitted[name]} (this run: {value})" for name, value in run.items() if name in fitted and fitted[name] != value]
    reader = str(run.get("reader", fitted["reader"]))
    if calibration.prompt_sha and fitted["reader"] == reader and calibration.prompt_sha != prompt_sha(reader):
        differs.append("another stance prompt")
    return "the calibration was fitted for " + ", ".join(differs) + ": treat its probability as approximate" if differs else ""


# --- the desk's own versions ---------------------------------------------------------------


@dataclass(frozen=True)
class Version:
    """One kept calibration: its file's stem (the time it was saved) and what it holds."""

    stem: str
    calibration: Calibration


@dataclass(frozen=True)
class Choice:
    """One line of the choice log: which version desk uses from ``at`` on, who chose it and why."""

    use: str  # a version's stem, or SHIPPED
    at: float
    by: str
    why: str


class CalibrationShelf:
    """The desk's calibrations in ``DATA/calibrations/KEY/``: every version kept, one in use.

    Files are written whole (a temporary file renamed into place), so a crash or a full disk
    leaves the versions kept before as they were.
    """

    def __init__(self, data_dir: Path) -> None:
        self.root = Path(data_dir) / "calibrations"

    def versions(self, key: str) -> list[Version]:
        """The kept versions of ``key``, oldest first; an unreadable file is skipped (``problems`` names it)."""
        folder = self._folder(key)
        found = []
        for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
            try:
                found.append(Version(path.stem, Calibration.from_json(json.loads(path.read_text(encoding="utf-8")))))
            except (OSError, ValueError, KeyError, TypeError):
                continue
        return found

    def problems(self, key: str) -> list[str]:
        """The version files of ``key`` that cannot be read (they are not used)."""
        folder = self._folder(key)
        bad = []
        for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
            try:
                Calibration.from_json(json.loads(path.read_text(encoding="utf-8")))
            except (OSError, ValueError, KeyError, TypeError) as exc:
                bad.append(f"{path}: {exc}")
        return bad

    def choices(self, key: str) -> list[Choice]:
        path = self._folder(key) / "choices.jsonl"
        if not path.is_file():
            return []
        found = []
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                row = json.loads(line)
                found.append(Choice(str(row["use"]), float(row["at"]), str(row.get("by", "")), str(row.get("why", ""))))
            except (ValueError, KeyError, TypeError):
                continue  # a line cut short by a crash: the one before stands
        return found

    def in_use(self, key: str) -> Version | None:
        """The version desk uses: the last one chosen (None when that is the shipped default or nothing is kept)."""
        versions = {v.stem: v for v in self.versions(key)}
        for choice in reversed(self.choices(key)):
            if choice.use == SHIPPED:
                return None
            if choice.use in versions:
                return versions[choice.use]
        return max(versions.values(), key=lambda v: v.stem) if versions else None

    def save(self, key: str, calibration: Calibration, *, by: str, why: str = "fitted", use: bool = True) -> Version:
        """Keep ``calibration`` as a new version of ``key`` and (``use``) put it in use at once."""
        folder = self._folder(key)
        stem = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
        taken = {v.stem for v in self.versions(key)}
        n = 1
        while (stem if n == 1 else f"{stem}-{n}") in taken or (folder / f"{stem if n == 1 else f'{stem}-{n}'}.json").exists():
            n += 1
        stem = stem if n == 1 else f"{stem}-{n}"
        named = Calibration.from_json({**calibration.to_json(), "name": f"{key}@{stem}"})
        self._write(folder / f"{stem}.json", json.dumps(named.to_json(), indent=2) + "\n")
        if use:
            self._choose(key, stem, by=by, why=why)
        return Version(stem, named)

    def roll_back(self, key: str, *, by: str, to: str = "") -> str:
        """Put an earlier calibration in use: ``to`` (a version's stem or ``shipped``), else the one before the version in use.

        Returns what is in use now (a stem, or ``shipped``). Nothing is deleted: the log keeps who went back, and when.
        """
        stems = [v.stem for v in self.versions(key)]
        current = self.in_use(key)
        if to:
            if to != SHIPPED and to not in stems:
                raise CalibrationFileError(f"no calibration {to!r} for {key}; kept: {', '.join(stems) or 'none'} (or 'shipped')")
            target = to
        else:
            if current is None:
                raise CalibrationFileError(f"{key} already uses the shipped calibration (or none): there is nothing earlier to go back to")
            earlier = [s for s in stems if s < current.stem]
            target = earlier[-1] if earlier else SHIPPED
        self._choose(key, target, by=by, why="rolled back" + (f" from {current.stem}" if current else ""))
        return target

    def _choose(self, key: str, use: str, *, by: str, why: str) -> None:
        path = self._folder(key) / "choices.jsonl"
        line = json.dumps({"use": use, "at": round(time.time(), 3), "by": by, "why": why}) + "\n"
        before = path.read_text(encoding="utf-8") if path.is_file() else ""
        if before and not before.endswith("\n"):
            before += "\n"  # a line cut short by a crash stays on its own line, and is skipped
        self._write(path, before + line)

    def _folder(self, key: str) -> Path:
        if not key or calibration_key(key) != key:  # no folder, no ".." of its own: a key names one folder under calibrations/
            raise CalibrationFileError(f"{key!r} is not a calibration key")
        return self.root / key

    @staticmethod
    def _write(path: Path, text: str) -> None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=path.parent, delete=False, suffix=".tmp") as tmp:
                tmp.write(text)
                tmp.flush()
                os.fsync(tmp.fileno())
            os.replace(tmp.name, path)
        except OSError as exc:
            with_tmp = locals().get("tmp")
            if with_tmp is not None:
                Path(with_tmp.name).unlink(missing_ok=True)
            raise CalibrationFileError(
                f"could not write {path} ({exc.strerror or exc}); the calibrations kept before are unchanged: free space or fix the folder's permissions, then try again"
            ) from exc
