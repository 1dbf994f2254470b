"""Tests of oracleproto.agent."""
