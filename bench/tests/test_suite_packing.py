"""The suite-packing replay reads a JUnit report's file times and replays make test's hand-out rule."""

from pathlib import Path

from bench.analysis.suite_packing import file_times, makespan

REPORT = """<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest">
<testcase classname="tests.test_doc_commands" name="test_every" time="140.0"/>
<testcase classname="tests.pipelines.record.test_store" name="a" time="3.0"/>
<testcase classname="tests.pipelines.record.test_store.TestOrder" name="b" time="2.0"/>
<testcase classname="tests.e2e.test_queue_browser" name="c" time="60.0"/>
<testcase classname="bench.tests.test_every_script" name="d" time="55.0"/>
</testsuite></testsuites>"""


def test_file_times_sum_a_file_s_tests_and_its_classes(tmp_path: Path) -> None:
    report = tmp_path / "report.xml"
    report.write_text(REPORT)
    assert file_times(report) == {
        "tests/test_doc_commands.py": 140.0,
        "tests/pipelines/record/test_store.py": 5.0,
        "tests/e2e/test_queue_browser.py": 60.0,
        "bench/tests/test_every_script.py": 55.0,
    }


def test_the_busiest_worker_is_what_the_order_leaves_it() -> None:
    times = {"a": 5.0, "b": 60.0, "c": 55.0, "d": 140.0}
    assert makespan(["a", "b", "c", "d"], times, 2) == 5 + 55 + 140  # the long file last: one worker runs it alone
    assert makespan(["d", "b", "c", "a"], times, 2) == 140  # longest first: the others fill the second worker
