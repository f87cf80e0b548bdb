"""The test run's own summary: why tests were skipped for want of ``../shared``, in one line."""

from __future__ import annotations

from _pytest.reports import TestReport

from ingest_assets_tests.support import SHARED_MISSING, shared_skips_line


def skipped(name: str, reason: str) -> TestReport:
    """A setup-time skip as pytest reports it (``longrepr`` is ``(path, line, "Skipped: reason")``)."""
    return TestReport(f"t.py::{name}", ("t.py", 1, name), {}, "skipped", ("t.py", 1, f"Skipped: {reason}"), "setup")


def test_the_skips_for_want_of_shared_fixtures_are_one_line():
    reports = [skipped("a", SHARED_MISSING), skipped("b", SHARED_MISSING), skipped("c", "Java is not installed")]
    assert shared_skips_line(reports) == (
        "2 tests skipped: ../shared/fixtures not found (third-party fixtures, read in place: a clone without them "
        "skips these; CI fails instead; see the README on tests)")
    assert shared_skips_line([skipped("c", "Java is not installed")]) is None
