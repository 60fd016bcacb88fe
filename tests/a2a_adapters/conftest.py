"""The black-box suites run against both adapters: a module opts in with
``pytestmark = pytest.mark.usefixtures("adapter")``."""

from collections.abc import Iterator

import pytest

from tests import servers


@pytest.fixture(params=servers.ADAPTERS)
def adapter(request: pytest.FixtureRequest) -> Iterator[servers.Adapter]:
    """Every server the test starts runs on this adapter (asyncio, then trio)."""
    servers.ADAPTER = request.param
    try:
        yield request.param
    finally:
        servers.ADAPTER = "asyncio"
