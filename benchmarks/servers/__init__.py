"""The servers under test: ours and the official a2a-sdk, with the same agent behaviour.

Each runs as its own process (``python -m benchmarks.servers.ours PORT`` / ``.sdk PORT``) and
prints ``READY`` once it listens, so the load generator measures them in the same way.
"""
