"""Sign-in timing: does the answer's time tell which user names exist? Median time of a sign-in attempt for an unknown
name, a known name with a wrong password and a known name with the right one, through the same code as the sign-in form
(pipelines.newsroom.access.sessions.attempt_sign_in: throttle check, bcrypt, session), with the throttle's count cleared between
attempts so every attempt is checked in full. The stand-in hash the code used before (cost 4) is timed beside it.

    .venv/bin/python -m bench.sign_in_timing [--tries 25] [--cost 12] [--out docs/measurements/data/FILE.json]

Figures are medians of this one run, on this machine; on a busy machine compare the ratios, not the milliseconds.
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import bcrypt

from pipelines.newsroom.access.sessions import WRONG, SignInSessions, SignInThrottle, attempt_sign_in, throttle_keys
from pipelines.newsroom.access.users import UsersFile, hash_password
from pipelines.record.store import RunStore


def medians_ms(attempts: dict[str, Callable[[], object]], tries: int) -> dict[str, float]:
    """Each attempt's median time; the attempts take turns, so a busy spell on the machine falls on all of them alike."""
    times: dict[str, list[float]] = {name: [] for name in attempts}
    for _ in range(tries):
        for name, attempt in attempts.items():
            started = time.perf_counter()
            attempt()
            times[name].append((time.perf_counter() - started) * 1000)
    return {name: statistics.median(values) for name, values in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tries", type=int, default=25)
    parser.add_argument("--cost", type=int, default=12, help="bcrypt cost of the account's hash (12: hash_password's default)")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    logging.disable(logging.WARNING)  # each failed attempt is logged; thousands of lines say nothing here
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "users.toml"
        path.write_text(
            f'[users.ana]\nname = "Ana Ruiz"\nrole = "editor"\npassword_hash = "{hash_password("right one", rounds=args.cost)}"\n'
        )
        users = UsersFile.load(path)
        engine = RunStore(f"sqlite:///{Path(folder) / 'runs.sqlite'}").engine  # its migrations build the sign-in tables
        sessions, throttle = SignInSessions(engine, b"b" * 32, 3600), SignInThrottle(engine)

        def sign_in(name: str, password: str) -> Callable[[], object]:
            def attempt() -> object:
                answer = attempt_sign_in(users, sessions, throttle, name, password, None)
                assert answer.user is not None or answer.message == WRONG, "every attempt checked in full, none refused by the lockout"
                throttle.succeeded(throttle_keys(name, None))  # the bench times the check, not the lockout
                return answer

            return attempt

        old_stand_in = bcrypt.hashpw(b"not a password", bcrypt.gensalt(rounds=4))
        attempts = {
            "unknown_name_ms": sign_in("nobody", "right one"),
            "known_name_wrong_password_ms": sign_in("ana", "wrong one"),
            "known_name_right_password_ms": sign_in("ana", "right one"),
            "old_cost_4_stand_in_ms": lambda: bcrypt.checkpw(b"right one", old_stand_in),
        }
        figures: dict[str, float | int] = {"cost": args.cost, "tries": args.tries, **medians_ms(attempts, args.tries)}
    figures["unknown_over_known_wrong"] = figures["unknown_name_ms"] / figures["known_name_wrong_password_ms"]
    for key, value in figures.items():
        print(f"{key:32} {value:10.3f}" if isinstance(value, float) else f"{key:32} {value:>10}")
    if args.out is not None:
        args.out.write_text(json.dumps(figures, indent=2) + "\n")
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
