"""How the model is written on the wire: the strict JSON converters of v1.0, v0.3 and the
legacy dialect, JSON-RPC envelopes, SSE framing and JCS.

Below the store and the deciders, because stored rows and the card are written in these
formats; above the model. Nothing here knows the configuration, an HTTP request or a
decision.
"""
