"""Command-line interface: one ``oracleproto`` command with verb subcommands."""

from __future__ import annotations

import importlib

from oracleproto.cli.app import app

# Each verb module registers its commands on `app` when imported.
_VERB_MODULES = ("build", "score", "publish", "export", "evaluate", "leakaudit")
for _name in _VERB_MODULES:
    importlib.import_module(f"oracleproto.cli.{_name}")


def main() -> None:
    app()
