"""oracleproto: leakage-controlled LLM forecasting data.

Resolved forecasting questions become replayable forecasting samples for a model whose
knowledge cutoff lies before the resolution (admitted iff cutoff <= tau - delta < tau).
The package is importable without side effects; stages live in submodules.
"""

__version__ = "0.1.0"
SCHEMA_VERSION = "1"
