"""Tests of oracleproto.harness."""
