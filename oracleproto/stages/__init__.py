"""Thin DVC stage modules: read params, call the library, write outputs under data/."""

import sys
from collections.abc import Callable


def run_stage(main: Callable[[], None]) -> None:
    """Run a stage; a known failure prints one line naming its cause and exits with the
    error's code (oracleproto.errors)."""
    from oracleproto.errors import OracleProtoError

    try:
        main()
    except OracleProtoError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(exc.exit_code)
