"""Errors a user can act on, by meaning. Every verb and stage catches :class:`OracleProtoError`
and prints one line, ``error: <message>``, exiting with the class's ``exit_code``; the message
names what is wrong (row, field, rule, path, endpoint variable) and never a secret.

- :class:`ConfigError` — params, flags or environment settings are wrong (exit 1);
- :class:`InputError` — a file or table cannot be used as given (exit 1);
- :class:`ExternalServiceError` — a model, search, detector or Hub service failed, with its
  ``kind`` (network, timeout, auth, …) (exit 1);
- :class:`RunAborted` — an evaluation stopped part-way (auth failure, replay miss, browsing
  barrier); finished trials are kept and a rerun resumes (exit 4).
"""

from __future__ import annotations

SHOWN_CHARS = 80  # characters of an id or value an error message quotes


def shown(text: str) -> str:
    """``text`` quoted for a message, cut to SHOWN_CHARS characters (a 10 MB id is not
    echoed back)."""
    if len(text) <= SHOWN_CHARS:
        return repr(text)
    return f"{text[:SHOWN_CHARS]!r}… ({len(text)} characters)"


class OracleProtoError(Exception):
    """A failure with a message that names what is wrong."""

    exit_code = 1


class ConfigError(OracleProtoError, ValueError):
    """Params, command-line flags or environment settings are wrong."""


class InputError(OracleProtoError, ValueError):
    """A file or table cannot be used as given (unreadable, wrong shape, breaks a rule)."""


class ExternalServiceError(OracleProtoError, RuntimeError):
    """A service the run depends on failed; ``kind`` is its classified fault."""

    def __init__(self, message: str, kind: str = "unknown") -> None:
        super().__init__(message)
        self.kind = kind


class RunAborted(OracleProtoError, RuntimeError):
    """The run stopped before its end; what finished is kept, and a rerun resumes."""

    exit_code = 4
