from pathlib import Path

from pipelines.core import machine


def test_the_machine_is_described_by_its_cpu_cores_and_boot(tmp_path: Path) -> None:
    (tmp_path / "sys" / "kernel" / "random").mkdir(parents=True)
    (tmp_path / "cpuinfo").write_text(
        "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz\n"
    )
    (tmp_path / "sys" / "kernel" / "random" / "boot_id").write_text("3f2a9c1e-0000-4000-8000-000000000000\n")
    assert machine.describe(tmp_path) == {
        "cpu": "Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz",
        "cores": machine.default_threads(),
        "boot": "3f2a9c1e",
    }


def test_a_machine_that_says_nothing_is_described_with_empty_strings(tmp_path: Path) -> None:
    described = machine.describe(tmp_path)
    assert described["cpu"] == "" and described["boot"] == "" and int(described["cores"]) >= 1  # type: ignore[call-overload]
