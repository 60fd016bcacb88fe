"""The machine: ``Server``, the one stateful object every transport drives, and the parts it
coordinates.

The top layer of the core: it remembers what happens between inputs (waits, streams, runs,
store jobs, the push outbox) and asks the layers below what each input means. Its public
names are handed on by ``a2a_core.transport``.
"""
