"""``python -m a2a_adapters serve MODULE:AGENT``."""

from .cli import main

main()
