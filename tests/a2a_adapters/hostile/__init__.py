"""The hostile-input suite: what an attacker, a broken client or a failing store can send or do,
as tables of cases, each with the clear answer it must get, on both loops and every binding it
concerns. A new endpoint or field gets its hostile cases by adding rows to a table here.

Small in ``make test``; ``A2A_FUZZ_EXAMPLES=N`` (``make fuzz``) draws N generated cases where a
table has a generated part, and ``A2A_OUTAGE_ROUNDS=N`` repeats each store outage N times.
"""
