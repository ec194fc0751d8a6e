"""The cores this process may use: what the embedded model's server and MiniLM on ONNX Runtime size their threads by.

Kept apart from ``pipelines.run.llm.embedded`` (which imports the chat adapters) so an ingestion
counts its cores without importing them.
"""

from __future__ import annotations

import os
from pathlib import Path


def default_threads() -> int:
    """One thread per physical core the process may use: llama.cpp's own default.

    Measured side by side on this project's quiet 2-core machine (bench/llama_threads.py),
    2 threads against 1: a `single` debate 1.73x faster, a `toolmad` debate 1.68x. A busy
    machine is another matter: llama.cpp's threads wait for each other at every step, so a
    core taken by other work stalls them all (session 2, under load averages of 7-14: 0.7-0.9
    tokens/s on 2 threads against 4-6 on 1). There, set ``DEBATEDESK_LLAMA_THREADS=1``.
    Hyperthreads of one core count once: a second thread on the same core does not speed
    llama.cpp up. A container's CPU quota caps the count.
    """
    usable = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else list(range(os.cpu_count() or 1))
    quota = cpu_quota()  # a container limited to 2 CPUs of a 32-core host must not start 16 threads
    return max(1, min(physical_cores(usable), quota if quota is not None else len(usable)))


def cpu_quota(cgroup: Path = Path("/sys/fs/cgroup")) -> int | None:
    """The CPUs a container's CPU quota allows (rounded up), from cgroup v2 or v1; None when there is no quota."""
    try:
        quota_text, period_text = (cgroup / "cpu.max").read_text().split()[:2]  # v2: "max 100000" or "200000 100000"
    except (OSError, ValueError):
        try:  # v1
            quota_text = (cgroup / "cpu" / "cpu.cfs_quota_us").read_text().strip()
            period_text = (cgroup / "cpu" / "cpu.cfs_period_us").read_text().strip()
        except OSError:
            return None
    try:
        quota, period = int(quota_text), int(period_text)
    except ValueError:  # "max": no quota
        return None
    if quota <= 0 or period <= 0:  # v1's -1: no quota
        return None
    return max(1, -(-quota // period))


def physical_cores(cpus: list[int], topology: Path = Path("/sys/devices/system/cpu")) -> int:
    """How many distinct physical cores ``cpus`` (logical CPU numbers) sit on; ``len(cpus)`` when that is unknown."""
    cores = set()
    for cpu in cpus:
        folder = topology / f"cpu{cpu}" / "topology"
        try:
            cores.add(((folder / "physical_package_id").read_text().strip(), (folder / "core_id").read_text().strip()))
        except OSError:
            return len(cpus)  # no topology (not Linux, or hidden): every logical CPU counts
    return len(cores)


def describe(proc: Path = Path("/proc")) -> dict[str, object]:
    """Which machine this is, for a benchmark's records: the CPU's model, the cores used, and this boot.

    Two sessions' seconds are one sample only on one kind of machine; the boot tells apart two
    starts of machines of the same kind (a new machine each session, or the same one rebooted).
    Empty strings where Linux's /proc does not say.
    """
    model = ""
    try:
        for line in (proc / "cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        boot = (proc / "sys" / "kernel" / "random" / "boot_id").read_text().strip()[:8]
    except OSError:
        boot = ""
    return {"cpu": model, "cores": default_threads(), "boot": boot}
