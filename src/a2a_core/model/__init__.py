"""The values the protocol is about: tasks, messages, parts, artifacts, the agent card, the
stored records and the parsed requests.

The bottom layer: it imports nothing of the core but errors and JSON limits, so every other
layer can speak of a task without importing the ways it is read, decided or stored. Its public
names are handed on by ``a2a_core``, ``a2a_core.card`` and ``a2a_core.store``.
"""
