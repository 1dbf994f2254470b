"""The one base class of the errors a user can act on (bad input, bad params, an
unreadable source, a failed stage). Stages and the CLI catch it and print one line."""


class OracleProtoError(Exception):
    """A failure with a message that names what is wrong (row, field, rule, path, cause)."""
