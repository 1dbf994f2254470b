"""Thin DVC stage modules: read params, call the library, write outputs under data/."""

import ctypes
import sys
from collections.abc import Callable

# glibc's mallopt parameters (<malloc.h>) and the values a stage runs with.
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
_KEPT_TOP = 1 << 30  # free memory at the heap's top given back only beyond this
_HEAP_BLOCKS_UP_TO = 32 << 20  # blocks up to this size come from the heap, not their own mmap


def keep_freed_memory() -> None:
    """Keep freed memory for the next batch instead of handing it back to the kernel.

    A stage is one short process that allocates and frees the same large arrays batch
    after batch. By default glibc gives each freed large block back (munmap, heap trim) and
    the next batch faults it in again page by page: ≈200,000 page faults and 1-2 s of
    system time in the ingest at 1M rows, ≈70,000 with this. Not for the audit: it holds
    the whole corpus at once, and the kept memory raised its peak (≈1.35 → ≈1.43 GiB) for
    no time it could measure. No-op without glibc."""
    try:
        mallopt = getattr(ctypes.CDLL(None), "mallopt", None)
    except (OSError, TypeError):  # no C library to open by name None (Windows)
        return
    if mallopt is not None:
        mallopt(_M_MMAP_THRESHOLD, _HEAP_BLOCKS_UP_TO)
        mallopt(_M_TRIM_THRESHOLD, _KEPT_TOP)


def run_stage(main: Callable[[], None], batched: bool = False) -> None:
    """Run a stage; a known failure prints one line naming its cause and exits with the
    error's code (oracleproto.errors). A ``batched`` stage keeps freed memory for its next
    batch (``keep_freed_memory``)."""
    from oracleproto.errors import OracleProtoError

    if batched:
        keep_freed_memory()
    try:
        main()
    except OracleProtoError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(exc.exit_code)
