"""Leakage measured, not asserted (issue 15).

- :mod:`~oracleproto.leakaudit.layers` / :mod:`~oracleproto.leakaudit.sample`: a run's
  search results by the layer that decided their fate, and a seeded stratified label sheet;
- :mod:`~oracleproto.leakaudit.report`: leak rates per layer, the residual leak rate and
  each filter's precision/recall from the labelled sheet;
- :mod:`~oracleproto.leakaudit.bench`: a detector layer scored on the shipped labelled set;
- :mod:`~oracleproto.leakaudit.probe`: the empirical knowledge-cutoff probe;
- :mod:`~oracleproto.leakaudit.stats`: the statistics (Wilson, Jeffreys), pure.
"""
