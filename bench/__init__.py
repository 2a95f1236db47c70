"""Benchmarks: scripts that print figures (see README.md here); never run by the tests."""
