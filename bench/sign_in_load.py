"""Sign-in load: do other requests wait while passwords are checked? Starts the app (``streamlit run server.py``) from a
checkout, with a users file whose hash has bcrypt's default cost, and times a cheap request (Streamlit's health check)
first on a quiet server, then while sign-ins keep arriving back to back. bcrypt takes about 0.3 s a check by design; run on
the server's event loop, every request that lands meanwhile waits for it.

    .venv/bin/python -m bench.sign_in_load [--checkout .] [--requests 60] [--signers 2] [--out FILE.json]

Run it on two checkouts (this one, and one of an earlier commit made with ``git worktree add``) to compare them in one
session; the figures are this machine's milliseconds, so compare each run's busy figure with its own quiet one.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from pipelines.newsroom.access.users import hash_password

PASSWORD = "right one"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_app(checkout: Path, data_dir: Path, users: Path, port: int) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DEBATEDESK_")}
    env.update(
        DEBATEDESK_DATA_DIR=str(data_dir),
        DEBATEDESK_USERS_FILE=str(users),
        DEBATEDESK_DEBATER__BACKEND="fake",
        DEBATEDESK_JUDGE__BACKEND="fake",
        DEBATEDESK_SCORER__BACKEND="fake",
    )
    command = [sys.executable, "-m", "streamlit", "run", "server.py", "--server.port", str(port), "--server.headless", "true"]
    command += ["--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false"]
    return subprocess.Popen(command, cwd=checkout, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def wait_until_up(base: str, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(base + "/_stcore/health", timeout=2):
                return
        except (urllib.error.URLError, OSError):
            time.sleep(0.5)
    raise SystemExit(f"the app did not answer at {base} within {seconds:.0f} s")


def timed_get(url: str) -> float:
    started = time.perf_counter()
    with urllib.request.urlopen(url, timeout=30) as answer:
        answer.read()
    return (time.perf_counter() - started) * 1000


def sign_in_loop(base: str, stop: threading.Event, done: list[float]) -> None:
    """Sign in as ana with her password, again and again (each one a full bcrypt check and a new session)."""
    body = urllib.parse.urlencode({"username": "ana", "password": PASSWORD, "next": "/"}).encode()

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: object, **kwargs: object) -> None:
            return None

    opener = urllib.request.build_opener(NoRedirect)
    while not stop.is_set():
        request = urllib.request.Request(base + "/desk/sign-in", data=body, headers={"Origin": base}, method="POST")
        started = time.perf_counter()
        try:
            opener.open(request, timeout=30).read()
        except urllib.error.HTTPError as exc:  # the 303 to the page: signed in
            if exc.code != 303:
                raise SystemExit(f"a sign-in was answered {exc.code}: the bench expects each one to hold") from None
        done.append((time.perf_counter() - started) * 1000)


def latencies(base: str, requests: int) -> list[float]:
    values = []
    for _ in range(requests):
        values.append(timed_get(base + "/_stcore/health"))
        time.sleep(0.05)
    return values


def summary(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {
        "median_ms": statistics.median(ordered),
        "p95_ms": ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))],
        "max_ms": ordered[-1],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkout", type=Path, default=Path("."), help="the checkout whose server.py is started")
    parser.add_argument("--requests", type=int, default=60, help="health checks timed in each phase")
    parser.add_argument("--signers", type=int, default=2, help="sign-ins kept in flight at once in the busy phase")
    parser.add_argument("--cost", type=int, default=12, help="bcrypt cost of the account's hash (12: the default)")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        users = Path(folder) / "users.toml"
        digest = hash_password(PASSWORD, rounds=args.cost)
        users.write_text(f'[users.ana]\nname = "Ana Ruiz"\nrole = "editor"\npassword_hash = "{digest}"\n')
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        app = start_app(args.checkout.resolve(), Path(folder) / "data", users, port)
        try:
            wait_until_up(base)
            quiet = latencies(base, args.requests)
            stop, signed = threading.Event(), []
            signers = [threading.Thread(target=sign_in_loop, args=(base, stop, signed)) for _ in range(args.signers)]
            for signer in signers:
                signer.start()
            time.sleep(0.5)
            busy = latencies(base, args.requests)
            stop.set()
            for signer in signers:
                signer.join(timeout=60)
        finally:
            app.terminate()
            app.wait(timeout=30)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=args.checkout, capture_output=True, text=True).stdout.strip()
    figures = {
        "commit": commit,
        "cost": args.cost,
        "signers": args.signers,
        "sign_ins": len(signed),
        "sign_in_median_ms": statistics.median(signed) if signed else 0.0,
        "quiet": summary(quiet),
        "busy": summary(busy),
    }
    print(json.dumps(figures, indent=2))
    if args.out is not None:
        args.out.write_text(json.dumps(figures, indent=2) + "\n")
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
