"""What a click costs the web server: its CPU seconds per rerun of a page, with and without the start's preload.

    .venv/bin/python bench/rerun_cost.py [--clicks 12] [--rounds 2] [--data-dir DIR]

Starts the app on the fake backend (web search off) two ways, in turns: ``server.py`` as ``make run`` does (the page
code imported and the heap frozen at start: components/preload.py) and ``app.py`` alone (plain Streamlit, no preload,
no sign-in routes, which a desk on one machine with nobody signing in does not use). Each time, one person in Chromium
opens Verify, checks the demo claim on desk, then flips the sidebar's step-mode toggle ``--clicks`` times, each click a
rerun. Printed per start: seconds to the health answer, the first page's seconds and the server's CPU for it, and per
click the wall seconds until the page settled (a fixed 0.2 s wait for the rerun to start included, the same for both entries) and the server's CPU seconds (from /proc, so threads and the collection
Streamlit runs after each script run, ``runner.postScriptGC``, are counted). Needs Debian's chromium and playwright (the
dev tools: ``make dev browser``). Absolute times are this machine's; the ratio is the figure that travels.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.environment import fake_app_environment, free_port  # noqa: E402

CLAIM = "Masks reduce transmission of respiratory viruses"
ENTRIES = ("server.py", "app.py")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(entry: str, data_dir: Path, clicks: int) -> dict[str, float]:
    from playwright.sync_api import sync_playwright

    port = free_port()
    env = fake_app_environment(data_dir)
    started = time.monotonic()
    server = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", entry, "--server.port", str(port), "--server.address", "127.0.0.1"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        while True:
            try:
                urllib.request.urlopen(url + "/_stcore/health", timeout=2)
                break
            except OSError:
                if time.monotonic() - started > 300 or server.poll() is not None:
                    raise SystemExit(f"{entry}: the app did not start") from None
                time.sleep(0.1)
        health = time.monotonic() - started
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=["--headless", "--no-sandbox", "--disable-gpu"])
            page = browser.new_context(viewport={"width": 1400, "height": 1800}).new_page()
            idle = page.locator('[data-testid="stApp"][data-test-script-state="notRunning"]')
            before, opened = cpu_seconds(server.pid), time.monotonic()
            page.goto(url)
            page.locator("textarea").first.wait_for(timeout=300_000)
            idle.wait_for(timeout=300_000)
            first, first_cpu = time.monotonic() - opened, cpu_seconds(server.pid) - before
            page.locator("textarea").first.fill(CLAIM)
            page.get_by_role("button", name="Verify").click()
            page.get_by_text("Verdict").first.wait_for(timeout=300_000)
            idle.wait_for(timeout=300_000)
            time.sleep(2)  # the run's own work done before the clicks are counted
            walls = []
            before = cpu_seconds(server.pid)
            for _ in range(clicks):
                clicked = time.monotonic()
                page.locator('[data-testid="stSidebar"]').get_by_text("Step mode", exact=True).click()
                page.wait_for_timeout(200)  # the rerun starts
                idle.wait_for(timeout=120_000)
                walls.append(time.monotonic() - clicked)
            time.sleep(1)  # what runs after the page settled (the collection) is the click's too
            per_click_cpu = (cpu_seconds(server.pid) - before) / clicks
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=30)
    return {
        "health_s": health,
        "first_s": first,
        "first_cpu_s": first_cpu,
        "click_s": statistics.median(walls),
        "click_cpu_s": per_click_cpu,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clicks", type=int, default=12, help="reruns measured per start")
    parser.add_argument("--rounds", type=int, default=2, help="starts of each entry, taken in turns")
    parser.add_argument("--data-dir", type=Path, help="data folder (default: a fresh one; the demo corpus is indexed once)")
    args = parser.parse_args()
    data_dir = args.data_dir or Path(tempfile.mkdtemp(prefix="rerun-cost-"))
    results: dict[str, list[dict[str, float]]] = {entry: [] for entry in ENTRIES}
    measure(ENTRIES[0], data_dir, 1)  # untimed: indexes the demo corpus, so neither entry pays for it
    for round_ in range(args.rounds):
        for entry in ENTRIES:
            seen = measure(entry, data_dir, args.clicks)
            results[entry].append(seen)
            print(f"round {round_ + 1} {entry:9} " + "  ".join(f"{k} {v:.3f}" for k, v in seen.items()), flush=True)
    print("\n| entry | health s | first page s | first page CPU s | click s (median) | click CPU s |")
    print("|---|---:|---:|---:|---:|---:|")
    for entry, runs in results.items():
        cells = [statistics.median(r[k] for r in runs) for k in ("health_s", "first_s", "first_cpu_s", "click_s", "click_cpu_s")]
        print(f"| {entry} | " + " | ".join(f"{c:.2f}" if i < 4 else f"{c:.3f}" for i, c in enumerate(cells)) + " |")
    server, plain = (statistics.median(r["click_cpu_s"] for r in results[e]) for e in ENTRIES)
    print(f"\nserver CPU per click, preloaded over plain: {server / plain:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
