"""A testing kit for the core, still with no I/O: a deterministic driver and (in
:mod:`a2a_core.testing.strategies`, which needs hypothesis) strategies for every wire object and
request of each dialect.
"""

from ._driver import EPOCH, Driver, Exchange, counting_ids

__all__ = ["EPOCH", "Driver", "Exchange", "counting_ids"]
