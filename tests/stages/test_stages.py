"""The stage runner: one error line per known failure, and freed memory kept for reuse."""

import platform
import subprocess
import sys
import textwrap

import pytest

from oracleproto.errors import InputError
from oracleproto.stages import run_stage

_FAULTS = textwrap.dedent(
    """
    import resource, sys, threading
    import numpy as np
    if sys.argv[1] == "kept":
        from oracleproto.stages import keep_freed_memory
        keep_freed_memory()
    def faults():
        return resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    def batches():  # arrays of a few MiB, allocated, touched and freed, as a parse worker does
        for _ in range(20):
            arrays = [np.ones(size) for size in (1 << 18, 3 << 18, 1 << 19, 5 << 17)]
            del arrays
    found = []
    def worker():
        batches()  # warm up: the first batch is faulted in either way
        before = faults()
        batches()
        found.append(faults() - before)
    thread = threading.Thread(target=worker)
    thread.start()
    thread.join()
    print(found[0])
    """
)


def _page_faults(mode: str) -> int:
    done = subprocess.run([sys.executable, "-c", _FAULTS, mode], capture_output=True, text=True, check=True)
    return int(done.stdout)


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc's allocator")
def test_freed_blocks_are_reused_not_faulted_in_again():
    default, kept = _page_faults("default"), _page_faults("kept")
    assert default > 10_000  # the worker's heap is trimmed and faulted in again, batch after batch
    assert kept < default / 10


def test_a_known_failure_is_one_line_and_its_exit_code(capsys):
    def main():
        raise InputError("cannot read source x: no such file")

    with pytest.raises(SystemExit) as exited:
        run_stage(main)
    assert exited.value.code == InputError.exit_code
    assert capsys.readouterr().err == "error: cannot read source x: no such file\n"


def test_only_a_batched_stage_changes_the_allocator(monkeypatch):
    import oracleproto.stages as stages

    calls = []
    monkeypatch.setattr(stages, "keep_freed_memory", lambda: calls.append("kept"))
    stages.run_stage(lambda: None)
    assert calls == []
    stages.run_stage(lambda: None, batched=True)
    assert calls == ["kept"]
