"""Shared pytest fixtures for the Python tests: the stoker CLI under test and a way to run it."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def stoker_cli() -> str:
    """Path of the stoker binary, from $STOKER_CLI (scripts/test sets it to build/stoker)."""
    path = os.environ.get("STOKER_CLI")
    if not path:
        pytest.fail("set STOKER_CLI to the stoker binary (scripts/test does this)")
    if not Path(path).is_file():
        pytest.fail(f"STOKER_CLI={path} does not exist; build it first")
    return path


@pytest.fixture
def run_stoker(stoker_cli):
    """run_stoker(*args) -> CompletedProcess with text stdout/stderr; never raises on exit code."""

    def run(*args, timeout=120):
        return subprocess.run(
            [stoker_cli, *map(str, args)], capture_output=True, text=True, timeout=timeout
        )

    return run


@pytest.fixture(autouse=True)
def _own_cache_home(tmp_path_factory, monkeypatch):
    """Remote datasets read through a per-user cache under $XDG_CACHE_HOME by default: give each
    test its own, so that no test writes to the user's cache or finds another test's shards. It is
    removed when the test ends: what one test cached is of no use to another, and kept it would add
    up to hundreds of MB by the end of the suite."""
    home = tmp_path_factory.mktemp("xdg-cache")
    monkeypatch.setenv("XDG_CACHE_HOME", str(home))
    yield
    shutil.rmtree(home, ignore_errors=True)


# --- Skips under CI ---------------------------------------------------------------------------
# About 40 tests import an optional reference library with pytest.importorskip, and a few need a
# server binary (nginx) or a test binary: on a developer's machine a missing one is a skip. Under
# CI (CI=true, as .ci/run sets it; or STOKER_STRICT_SKIPS=1) scripts/setup installs every one of
# them, so a skip there means a dependency went missing, and it fails instead, with the skip's
# reason. A test that may legitimately skip in CI says so with @pytest.mark.allow_skip("why")
# (the GPU tests, in tests/gpu/, are outside this folder and keep their skips).


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "allow_skip(reason): this test may skip under CI (CI=true) without failing it"
    )


def _strict_skips() -> bool:
    return os.environ.get("CI") == "true" or os.environ.get("STOKER_STRICT_SKIPS") == "1"


def _skip_reason(report) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2])
    return str(longrepr)


def _unexpected_skip(report, what: str) -> None:
    report.outcome = "failed"
    report.longrepr = (
        f"unexpected skip under CI ({what}): {_skip_reason(report)}\n"
        "scripts/setup installs every test dependency, so a skip in CI means one went missing; "
        "install it (and pin it in scripts/requirements-dev.txt), or mark the test "
        '@pytest.mark.allow_skip("why") if it may skip'
    )


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.skipped and _strict_skips() and item.get_closest_marker("allow_skip") is None:
        if getattr(report, "wasxfail", None) is None:
            _unexpected_skip(report, item.nodeid)


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    # A module-level importorskip skips the whole file at collection.
    outcome = yield
    report = outcome.get_result()
    if report.skipped and _strict_skips():
        _unexpected_skip(report, str(collector.nodeid))
