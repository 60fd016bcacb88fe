"""Benchmarks of this server side by side with the official a2a-sdk (see README.md here)."""
