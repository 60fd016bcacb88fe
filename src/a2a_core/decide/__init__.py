"""Pure deciders: given an input, a snapshot of the task and the world (time, ids), what
changes, what is written and which effects follow.

The state table, the reducer's functions, validation, visibility, push policy and what the card
says live here.
Nothing here remembers anything between calls: that is the machine's job, one layer up. Its
public names are handed on by ``a2a_core.decisions``.
"""
