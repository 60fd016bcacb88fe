"""The README's and the manual's code blocks, collected as tests (``tests/doc_examples.py``)."""

from tests.doc_examples import DOCS

pytest_collect_file = DOCS.pytest()
