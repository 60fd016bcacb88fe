"""``python -m a2a_adapters serve MODULE:AGENT``."""

from ._command import main

main()
