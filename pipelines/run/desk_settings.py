"""The desk's settings, shared by every session and the command line: spend limits, prices per model and model endpoints.

They live in the run store (tables ``desk_settings`` and ``desk_settings_changes``), not in a browser session: a reload
keeps them and another person sees the same. Only an editor changes them (on a desk without sign-in, the person at the
machine); each change is an audit entry with the setting, its value before and after, who and when. An API key is kept
encrypted with the desk's own key (``desk-settings.key`` in the data folder, made on first use) and shown back only as
its last four characters.

A run may lower a limit for itself, never raise it past the desk's (``within_desk``); the limits it started under are
stored with it (its config snapshot) and hold when it is resumed, until an editor raises them (``limits_on_resume``).
"""

from __future__ import annotations

import json
import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.fernet import Fernet, InvalidToken
from pydantic import BaseModel, Field, SecretStr, ValidationError
from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError, SQLAlchemyError
from sqlalchemy.orm import Session

from pipelines.core.config import ROLES, BudgetConfig, RunConfig, describe_invalid, load_run_config, parse_prices
from pipelines.core.database.faults import is_store_fault
from pipelines.core.database.tables import DeskSettingChangeRow, DeskSettingRow
from pipelines.core.errors import DebateDeskError, StoreUnavailableError
from pipelines.core.text.urls import scrub_url
from pipelines.newsroom.access.roles import ALLOWED, NotAllowedError, require_role
from pipelines.newsroom.access.users import User
from pipelines.record.outage import fault_message
from pipelines.record.store import RunStore
from pipelines.run.llm.registry import get_backend

log = logging.getLogger("debatedesk.desk_settings")

LIMITS = ("max_calls", "max_tokens", "max_cost", "batch_max_calls", "batch_max_tokens", "batch_max_cost")
ENDPOINT_FIELDS = ("backend", "model", "base_url", "api_key")
KEY_FILE = "desk-settings.key"
ROW = "desk"  # one row holds them all: one version number, one compare-and-set


class DeskSettingsRefusedError(DebateDeskError):
    """The person may not change the desk's settings (or they changed under them); the message says why."""


class Endpoint(BaseModel):
    """Where one role's model is served: the part of a ModelSpec the desk decides."""

    backend: str = "embedded"
    model: str = ""
    base_url: str = ""
    api_key: SecretStr = Field(default=SecretStr(""))


class DeskSettings(BaseModel):
    """Spend limits and prices (a BudgetConfig) and each role's endpoint; ``version`` counts the saves."""

    budget: BudgetConfig = Field(default_factory=BudgetConfig)
    endpoints: dict[str, Endpoint] = Field(default_factory=dict)
    version: int = 0
    changed_by: str = ""
    changed_at: float | None = None

    @classmethod
    def defaults(cls, base: RunConfig | None = None) -> DeskSettings:
        """What a desk has before an editor saves anything: the ``DEBATEDESK_*`` environment's (or ``base``'s) settings."""
        base = base or load_run_config()
        endpoints = {role: Endpoint(**{f: getattr(base.role(role), f) for f in ENDPOINT_FIELDS}) for role in ROLES}
        return cls(budget=base.budget, endpoints=endpoints)

    def apply(self, config: RunConfig) -> RunConfig:
        """``config`` as the desk runs it: each role on the desk's endpoint (the session's key when the desk keeps none),
        the desk's prices, and limits no looser than the desk's."""
        roles: dict[str, Any] = {}
        for role in ROLES:
            endpoint = self.endpoints.get(role)
            if endpoint is None:
                continue
            update: dict[str, Any] = {f: getattr(endpoint, f) for f in ("backend", "model", "base_url")}
            if endpoint.api_key.get_secret_value():
                update["api_key"] = endpoint.api_key
            roles[role] = config.role(role).model_copy(update=update)
        return config.model_copy(update={**roles, "budget": within_desk(config.budget, self.budget)})


@dataclass(frozen=True)
class DeskChange:
    """One audit entry: a setting's value before and after (keys masked), who changed it and when."""

    at: float
    by: str
    setting: str
    before: str
    after: str


def may_change(user: User | None, *, sign_in: bool) -> bool:
    """Whether this person may change the desk's settings: an editor; on a desk without sign-in, the person at the machine."""
    if not sign_in:
        return True
    return user is not None and user.role in ALLOWED["desk_settings"]


def _looser(a: float, b: float) -> bool:
    """Limit ``a`` allows more than ``b`` (0 is no limit)."""
    return (a == 0 and b != 0) or (a != 0 and b != 0 and a > b)


def tighter(a: float, b: float) -> float:
    """The tighter of two limits (0 is no limit)."""
    return b if _looser(a, b) else a


def within_desk(wanted: BudgetConfig, desk: BudgetConfig) -> BudgetConfig:
    """A run's limits: its own where they are lower than the desk's, the desk's otherwise."""
    update: dict[str, Any] = {name: tighter(getattr(wanted, name), getattr(desk, name)) for name in LIMITS}
    update.update(_prices(wanted, desk))
    return wanted.model_copy(update=update)


def _prices(own: BudgetConfig, desk: BudgetConfig) -> dict[str, Any]:
    """The desk's prices; the run's own only for a model the desk does not price (the higher default price)."""
    merged = {**parse_prices(own.prices), **parse_prices(desk.prices)}
    return {"prices": [f"{m}={p:g}" for m, p in merged.items()], "default_price": max(own.default_price, desk.default_price)}


def limits_on_resume(
    stored: BudgetConfig, desk_then: BudgetConfig | None, desk_now: BudgetConfig, wanted: BudgetConfig | None, *, may_raise: bool
) -> BudgetConfig:
    """A resumed run's limits, field by field.

    The limit it was stored with holds. Where an editor has raised the desk's limit since the run started (the desk's
    now is looser than the desk's then) and the run had not lowered that limit for itself, it follows the desk's. The
    person resuming may lower a limit; may raise one only if they may change the desk's settings, and never past the
    desk's. A session or command line that sets no limit asks for the desk's, so it raises nothing by itself.
    """
    update: dict[str, Any] = {}
    for name in LIMITS:
        limit = getattr(stored, name)
        now = getattr(desk_now, name)
        if desk_then is not None and limit == getattr(desk_then, name) and _looser(now, limit):
            limit = now
        if wanted is not None:
            asked = getattr(wanted, name)
            limit = asked if may_raise else tighter(limit, asked)
        update[name] = tighter(limit, now)
    update.update(_prices(stored, desk_now))
    return stored.model_copy(update=update)


class DeskSettingsBook:
    """The desk's settings in the run store: read by anyone, changed by editors only, every change audited."""

    def __init__(self, store: RunStore, data_dir: Path, base: RunConfig | None = None) -> None:
        self.store = store
        self._key_file = data_dir / KEY_FILE
        self._base = base

    def load(self) -> DeskSettings:
        """The desk's settings as stored now (the environment's until an editor first saves)."""
        try:
            with Session(self.store.engine) as s:
                row = s.get(DeskSettingRow, ROW)
                if row is None:
                    return DeskSettings.defaults(self._base)
                data = json.loads(row.value)
        except SQLAlchemyError as exc:  # no limits can be known, so no run may start: say why, plainly
            if is_store_fault(exc):
                raise StoreUnavailableError(
                    f"the desk's settings cannot be read from the run store: {fault_message(self.store.url, exc)}; nothing was "
                    "changed. Try again once it is back"
                ) from exc
            raise DebateDeskError(
                f"the desk's settings cannot be read from the run store ({_where(self.store)}): {type(exc).__name__}"
            ) from exc
        for endpoint in data.get("endpoints", {}).values():
            endpoint["api_key"] = self._decrypt(endpoint.pop("api_key_sealed", ""))
        try:
            return DeskSettings.model_validate({**data, "version": row.version, "changed_by": row.changed_by, "changed_at": row.changed_at})
        except ValidationError as exc:  # written by a later version, or by hand: say which setting, keep the rest working
            raise DebateDeskError(f"the desk's stored settings are not valid: {describe_invalid(exc, DeskSettings)}") from exc

    def save(
        self, new: DeskSettings, *, user: User | None, sign_in: bool, name: str = "", expected_version: int | None = None
    ) -> list[DeskChange]:
        """Store ``new`` as the desk's settings; returns the changes made (none if nothing changed).

        Refused unless ``user`` may change them (``may_change``), and when ``expected_version`` is given and another
        editor saved since (so a stale page cannot undo their change). A blank API key keeps the stored one.
        """
        by = user.name if user is not None else " ".join(name.split()) or "the person at this machine"
        if sign_in and user is None:
            log.warning("refused a change of the desk's settings: nobody is signed in")
            raise DeskSettingsRefusedError("only an editor may change the desk's settings; nobody is signed in")
        try:
            require_role(user, "desk_settings")  # the one role check (and its log line)
        except NotAllowedError as exc:
            raise DeskSettingsRefusedError(str(exc)) from None
        problems = new.budget.unpriced_models(_models(new))
        if problems:
            raise DeskSettingsRefusedError(unpriced_message(problems))
        current = self.load()
        if expected_version is not None and current.version != expected_version:
            who = current.changed_by or "another editor"
            raise DeskSettingsRefusedError(
                f"{who} changed the desk's settings after this page showed them; reload to see theirs, then change yours"
            )
        endpoints = {}
        for role in ROLES:
            endpoint = new.endpoints.get(role) or current.endpoints.get(role) or Endpoint()
            if not endpoint.api_key.get_secret_value() and role in current.endpoints:
                endpoint = endpoint.model_copy(update={"api_key": current.endpoints[role].api_key})
            endpoints[role] = endpoint
        new = new.model_copy(update={"endpoints": endpoints})
        changes = [DeskChange(at=time.time(), by=by, setting=s, before=b, after=a) for s, b, a in _differences(current, new)]
        if not changes:
            return []
        value = new.model_dump(mode="json", include={"budget", "endpoints"})
        for role, endpoint in value["endpoints"].items():
            endpoint.pop("api_key", None)
            endpoint["api_key_sealed"] = self._encrypt(endpoints[role].api_key.get_secret_value())
        now = changes[0].at
        try:
            self._write(value, current.version, by, now, changes)
        except SQLAlchemyError as exc:
            raise DeskSettingsRefusedError(
                f"the run store ({_where(self.store)}) did not take the change ({type(exc).__name__}); nothing was saved, try again"
            ) from exc
        log.info("desk settings changed by %s: %s", by, ", ".join(c.setting for c in changes))
        return changes

    def _write(self, value: dict[str, Any], version: int, by: str, now: float, changes: list[DeskChange]) -> None:
        """The settings and their audit entries in one transaction (a version changed meanwhile refuses it)."""
        at_once = DeskSettingsRefusedError("another editor changed the desk's settings at the same moment; reload and try again")
        try:
            with Session(self.store.engine) as s, s.begin():
                if version == 0:  # never saved: the row's primary key lets one first save in, the other meets IntegrityError
                    s.add(DeskSettingRow(name=ROW, value=json.dumps(value), version=1, changed_by=by, changed_at=now))
                    s.flush()
                else:  # compare-and-set in the statement itself: SQLite reads outside the write lock, so a read-then-write
                    # check let two saves of one version both through; the row is written only while it holds that version
                    written = s.execute(
                        update(DeskSettingRow)
                        .where(DeskSettingRow.name == ROW, DeskSettingRow.version == version)
                        .values(value=json.dumps(value), version=version + 1, changed_by=by, changed_at=now)
                    )
                    if getattr(written, "rowcount", 0) != 1:  # saved by someone else between our read and this write
                        raise at_once
                s.add_all(DeskSettingChangeRow(at=c.at, by=c.by, setting=c.setting, before=c.before, after=c.after) for c in changes)
        except IntegrityError:
            raise at_once from None

    def changes(self, limit: int = 50) -> list[DeskChange]:
        """The latest audit entries, newest first."""
        try:
            with Session(self.store.engine) as s:
                rows = s.scalars(select(DeskSettingChangeRow).order_by(DeskSettingChangeRow.id.desc()).limit(limit)).all()
                return [DeskChange(at=r.at, by=r.by, setting=r.setting, before=r.before, after=r.after) for r in rows]
        except SQLAlchemyError as exc:
            raise DebateDeskError(f"the desk's list of changes cannot be read from the run store ({_where(self.store)})") from exc

    # --- API keys at rest ----------------------------------------------------------------------

    def _fernet(self) -> Fernet:
        if not self._key_file.is_file():
            self._key_file.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self._key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as out:
                out.write(Fernet.generate_key())
        return Fernet(self._key_file.read_bytes().strip())

    def _encrypt(self, secret: str) -> str:
        return self._fernet().encrypt(secret.encode()).decode() if secret else ""

    def _decrypt(self, sealed: str) -> str:
        if not sealed:
            return ""
        try:
            return self._fernet().decrypt(sealed.encode()).decode()
        except (InvalidToken, FileNotFoundError, ValueError):
            log.warning("a stored API key cannot be read with %s (another machine's key file?); it is left blank", self._key_file)
            return ""


def _where(store: RunStore) -> str:
    return scrub_url(store.url)


def masked(secret: str) -> str:
    """A key as it may be shown: its last four characters at most (none of a short one)."""
    if not secret:
        return "(none)"
    return f"…{secret[-4:]}" if len(secret) >= 12 else "(set)"


def unpriced_message(models: list[str]) -> str:
    names = ", ".join(models)
    return (
        f"a money limit is set but {names} {'has' if len(models) == 1 else 'have'} no price, so the limit could never be reached: "
        "add a price for each (model=price; 0 for a free local model) or a default price, or set the money limits to 0"
    )


def _models(settings: DeskSettings) -> list[str]:
    return sorted({model_name(e.backend, e.model) for e in settings.endpoints.values()})


def model_name(backend: str, model: str) -> str:
    """The name a call is recorded (and priced) under: the model, else the backend's default model, else the backend."""
    if model:
        return model
    try:
        found = get_backend(backend)
    except DebateDeskError:
        return backend
    return found.default_model or found.name


def unpriced_roles(config: RunConfig) -> list[str]:
    """The models of ``config``'s roles that its money limit could not count (no price): a run with one is refused."""
    return config.budget.unpriced_models(model_name(config.role(r).backend, config.role(r).model) for r in ROLES)


def _differences(before: DeskSettings, after: DeskSettings) -> list[tuple[str, str, str]]:
    found: list[tuple[str, str, str]] = []
    for name in BudgetConfig.model_fields:
        old, new = getattr(before.budget, name), getattr(after.budget, name)
        if old != new:
            found.append((f"budget.{name}", _shown(old), _shown(new)))
    for role in ROLES:
        old_e, new_e = before.endpoints.get(role, Endpoint()), after.endpoints.get(role, Endpoint())
        for name in ENDPOINT_FIELDS:
            old, new = getattr(old_e, name), getattr(new_e, name)
            if isinstance(old, SecretStr):
                if old.get_secret_value() != new.get_secret_value():
                    found.append((f"{role}.{name}", masked(old.get_secret_value()), masked(new.get_secret_value())))
            elif old != new:
                found.append((f"{role}.{name}", _shown(old), _shown(new)))
    return found


def _shown(value: object) -> str:
    if isinstance(value, list):
        return ", ".join(str(v) for v in value) or "(none)"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value) if value != "" else "(none)"
