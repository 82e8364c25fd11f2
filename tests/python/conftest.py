"""Fixtures of the Python module's tests (tests/python, run by ctest as python_tests and so by
tests/run): the chakra binary to compare with (CHAKRA_BIN), the repository's files, and the
reference data of ../shared, read as the C++ suites do: where it is absent a test that needs it
is counted as not run (and said at the end, and added to CHAKRA_NOT_RUN_FILE for tests/run's last
line); with CHAKRA_REQUIRE_SHARED=1 (CI) it fails instead."""

import json
import os
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHARED = os.environ.get("CHAKRA_SHARED_DIR") or os.path.join(ROOT, "..", "shared")
_not_run = []


@pytest.fixture(scope="session")
def chakra_bin():
    path = os.environ.get("CHAKRA_BIN")
    assert path and os.path.isfile(path), "CHAKRA_BIN must name the chakra binary (ctest sets it)"
    return path


@pytest.fixture(scope="session")
def cli(chakra_bin):
    """cli(*args) runs the chakra binary and returns its stdout; cli.json(*args) parses it."""

    class Cli:
        def __call__(self, *args, check=True):
            done = subprocess.run([chakra_bin, *map(str, args)], capture_output=True, text=True)
            if check and done.returncode != 0:
                raise AssertionError(f"chakra {' '.join(map(str, args))} failed: {done.stderr}")
            return done

        def json(self, *args):
            return json.loads(self(*args).stdout)

    return Cli()


def repo(*parts):
    return os.path.join(ROOT, *parts)


@pytest.fixture
def shared(request):
    """shared(path): a path under ../shared, or the test counted as not run where it is absent."""

    def path(*parts):
        if os.path.isdir(os.path.join(SHARED, "reference")):
            return os.path.join(SHARED, *parts)
        if os.environ.get("CHAKRA_REQUIRE_SHARED") == "1":
            pytest.fail(f"the reference data of ../shared is absent at {SHARED} and CHAKRA_REQUIRE_SHARED=1")
        _not_run.append(request.node.nodeid)
        pytest.skip(f"not run: it reads the reference data of ../shared, absent at {SHARED}")

    return path


def pytest_sessionfinish(session, exitstatus):
    if not _not_run:
        return
    print(f"\n[ NOT RUN  ] {len(_not_run)} tests: they read the reference data of ../shared, absent at {SHARED}")
    if os.environ.get("CHAKRA_NOT_RUN_FILE"):
        with open(os.environ["CHAKRA_NOT_RUN_FILE"], "a") as f:
            f.write(f"{len(_not_run)}\n")
