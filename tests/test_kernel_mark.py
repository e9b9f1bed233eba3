"""tests/conftest.py's guard: the `kernel` mark is per test, and a test that reaches the real
kernel without it is refused at collection (make test runs unmarked tests on two workers)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

# a pure test, a root test and a test reaching root through a helper, marks filled in; a data
# file, as its text would make this module look as if it reached the kernel
MODULE = Path(__file__).parent / "data" / "kernel_mark_sample.py.txt"


@pytest.fixture
def guarded(pytester: pytest.Pytester):
    pytester.makeconftest(Path(__file__).with_name("conftest.py").read_text(encoding="utf-8"))
    pytester.makeini("[pytest]\nmarkers =\n    kernel: run alone\n")

    def collect(mark: str, helper_mark: str) -> pytest.RunResult:
        pytester.makepyfile(
            test_mod=MODULE.read_text(encoding="utf-8").format(mark=mark, helper_mark=helper_mark)
        )
        return pytester.runpytest_subprocess("--collect-only", "-q", "-p", "no:cacheprovider")

    return collect


def test_a_pure_test_beside_marked_kernel_tests_needs_no_mark(guarded):
    r = guarded("@pytest.mark.kernel\n", "@pytest.mark.kernel\n")
    assert r.ret == 0, r.stdout.str() + r.stderr.str()
    r.stdout.fnmatch_lines(["*3 tests collected*"])


@pytest.mark.parametrize(
    ("mark", "helper_mark", "refused"),
    [
        ("", "@pytest.mark.kernel\n", "test_mod.py::test_real"),  # a skipif naming geteuid
        ("@pytest.mark.kernel\n", "", "test_mod.py::test_through_a_helper"),  # a helper's
    ],
)
def test_a_kernel_test_without_the_mark_is_refused_by_name(guarded, mark, helper_mark, refused):
    r = guarded(mark, helper_mark)
    assert r.ret != 0
    err = r.stderr.str()
    assert f"{refused}: reaches the real kernel" in err, err
    assert "test_pure" not in err, err
