"""The black-box suites run against both adapters: a module opts in with
``pytestmark = pytest.mark.usefixtures("adapter")``, or with ``module_adapter`` when its servers
are module-scoped (one server per adapter, shared by every test of the module)."""

from collections.abc import Iterator

import pytest

from tests import servers


def _serving_on(adapter: servers.Adapter) -> Iterator[servers.Adapter]:
    servers.ADAPTER = adapter
    try:
        yield adapter
    finally:
        servers.ADAPTER = "asyncio"


@pytest.fixture(params=servers.ADAPTERS)
def adapter(request: pytest.FixtureRequest) -> Iterator[servers.Adapter]:
    """Every server the test starts runs on this adapter (asyncio, then trio)."""
    yield from _serving_on(request.param)


@pytest.fixture(scope="module", params=servers.ADAPTERS)
def module_adapter(request: pytest.FixtureRequest) -> Iterator[servers.Adapter]:
    """The same, chosen once per module, for modules whose servers are module-scoped."""
    yield from _serving_on(request.param)
