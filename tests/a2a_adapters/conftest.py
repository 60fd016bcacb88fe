"""The black-box suites run against both adapters: a module opts in with
``pytestmark = pytest.mark.usefixtures("adapter")``, or with ``module_adapter`` when its servers
are module-scoped (one server per adapter, shared by every test of the module)."""

import os
import uuid
from collections.abc import Iterator

import pytest

from a2a_adapters.stores import RedisStore, SqliteStore, _open
from tests import servers
from tests.a2a_adapters.redis_server import REDIS_SERVER, RedisServer, redis_available


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


#: The stores the suite made for engines built without one (``A2A_TEST_STORE=sqlite|redis``).
_OPENED: list[SqliteStore | RedisStore] = []


@pytest.fixture(autouse=True, scope="session")
def default_store(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """With ``A2A_TEST_STORE=sqlite``, every engine a test builds without a store of its own
    keeps its tasks in a fresh SQLite file instead of memory: the whole black-box suite then
    runs on the durable store (``make test-sqlite``). ``A2A_TEST_STORE=redis`` does the same
    on the session's Redis, each engine under a key prefix of its own."""
    chosen = os.environ.get("A2A_TEST_STORE", "memory")
    if chosen == "memory":
        yield chosen
        return
    if chosen not in ("sqlite", "redis"):
        raise pytest.UsageError(f"A2A_TEST_STORE={chosen!r}: expected memory, sqlite or redis")

    def fresh() -> SqliteStore | RedisStore:
        store: SqliteStore | RedisStore
        if chosen == "redis":
            store = RedisStore(request.getfixturevalue("redis_url"), prefix=unique_prefix())
        else:
            # NORMAL, not FULL: the same code and the same crash safety for a killed process;
            # what FULL adds (an fsync per commit, against power loss) would only slow the
            # suite down.
            store = SqliteStore(tmp_path_factory.mktemp("store") / "tasks.db", synchronous="NORMAL")
        _OPENED.append(store)
        return store

    with pytest.MonkeyPatch.context() as patch:
        # Every engine built without a store of its own opens "memory" through open_store.
        patch.setattr(_open, "MemoryStore", fresh)
        yield chosen
    for store in _OPENED:
        store.close()


@pytest.fixture(autouse=True)
def close_the_tests_stores(default_store: str) -> Iterator[None]:
    """Close the stores a test's own engines were given, once it is over (each holds files
    open: a whole suite's would run the process out of descriptors). A module's shared servers
    made theirs before, and keep them until the session ends."""
    before = len(_OPENED)
    yield
    for store in _OPENED[before:]:
        store.close()
    del _OPENED[before:]


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    """The URL of a ``redis-server`` started for this test session (only once a test asks for
    it), on a free port, stopped at the end. Tests share it, each under key prefixes of its own
    (:func:`redis_prefix`): no test sees another's keys."""
    if not redis_available():
        pytest.fail(
            f"{REDIS_SERVER} is missing: the Redis tests need it (apt-get install redis-server)"
        )
    with RedisServer() as server:
        yield server.url


@pytest.fixture
def redis_prefix() -> str:
    """A key prefix no other test uses."""
    return unique_prefix()


def unique_prefix() -> str:
    return f"t-{uuid.uuid4().hex[:12]}"
