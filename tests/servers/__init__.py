"""Loopback stand-ins for remote services (tests only; bound to 127.0.0.1)."""
