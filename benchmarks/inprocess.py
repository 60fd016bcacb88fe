"""Benchmarks without HTTP, each run in a fresh process: core rate, memory per task, store latency.

    python -m benchmarks.inprocess core ours|a2a-sdk|floor COUNT
    python -m benchmarks.inprocess memory ours|a2a-sdk COUNT
    python -m benchmarks.inprocess store ours|a2a-sdk COUNT
    python -m benchmarks.inprocess followups ours COUNT
    python -m benchmarks.inprocess sqlite ours-full|ours-normal|a2a-sdk COUNT OPS
    python -m benchmarks.inprocess settled-sqlite ours|a2a-sdk COUNT
    python -m benchmarks.inprocess settled-redis ours COUNT

Each prints one JSON object. A fresh process per measurement keeps one server's garbage out of
the other's memory reading.

* ``core``: SendMessage requests per second from request bytes to response bytes, the echo
  agent's two updates included (handed over together, as the adapters hand over values
  yielded in a row: ``transport.Outputs``); and the function calls one such send makes
  (Python's and C's, as cProfile counts them, over ``COUNTED_SENDS`` more sends after the
  timed ones). Ours is the sans-IO server machine alone (``a2a_core.transport.Server``
  keeping its tasks in memory), driven synchronously (no event loop at all); the SDK's is its
  ``DefaultRequestHandler`` called directly, with the JSON and protobuf conversions its
  JSON-RPC route does around it.
  ``floor`` is the least any server must do for the same send on our codec (``core_floor``):
  how much of ours its guarantees take.
* ``memory``: resident memory per stored completed task, after ``COUNT`` blocking sends through
  each server's whole request path short of HTTP (our ``Engine.handle``, the SDK's handler).
* ``store``: mean latency of get, save and list-first-page on each server's in-memory store
  holding ``COUNT`` completed tasks.
* ``followups``: the cost of one more turn on a long conversation: ``COUNT`` blocking
  follow-ups to one task whose agent asks for input each time, through the core and its
  in-memory tasks, the reply rendered; the mean per follow-up over the first and the last 100.
  Once with ``historyLength: 0`` (the server's own work) and once with the whole history in
  each reply (which the client asked for, so its encoding grows with the history). The task's
  history is left unbounded (``max_task_messages=None``) to show the growth past the default.
* ``sqlite``: ``store``'s figures (over up to ``OPS`` calls each) on each server's SQLite store,
  a fresh file in the temporary directory holding ``COUNT`` completed tasks: our
  ``SqliteStore`` at ``synchronous=FULL`` or ``NORMAL`` (its write-ahead log), the SDK's
  ``DatabaseTaskStore`` on aiosqlite (SQLite's defaults: a rollback journal, ``FULL``); then the
  file's bytes per task, once the store is closed (our log checkpointed into the file).
* ``settled-sqlite``, ``settled-redis``: ``memory``'s figure for the durable stores, the same
  ``COUNT`` blocking echo sends through each server's request path: the SQLite file's bytes per
  settled task (ours, and the SDK's handler on its SQL store), and Redis's ``used_memory`` per
  settled task (ours; the SDK has no Redis store), on a ``redis-server`` started for it.
"""

import asyncio
import gc
import itertools
import json
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

#: Page size of the listing measured by ``store``.
PAGE = 50
#: Blocking sends in flight at once while ``memory`` fills a server.
IN_FLIGHT = 32


def _send_body(n: int) -> bytes:
    message = {"messageId": f"m-{n}", "role": "ROLE_USER", "parts": [{"text": "hello"}]}
    body = {"jsonrpc": "2.0", "id": n, "method": "SendMessage", "params": {"message": message}}
    return json.dumps(body).encode()


def _rss_bytes() -> int:
    with open("/proc/self/statm") as statm:
        pages = int(statm.read().split()[1])
    import resource

    return pages * resource.getpagesize()


# --- core: decode, decide, encode ---------------------------------------------------------------


def _machine(**options: Any) -> Any:
    """Our server machine over its in-memory tasks, its clock and ids counting up."""
    from a2a_core import Core, CoreConfig
    from a2a_core.store import MemoryTasks
    from a2a_core.transport import Server
    from benchmarks.servers.ours import CARD

    ids = itertools.count()
    return Server(
        Core(CoreConfig(card=CARD, **options)),
        store=MemoryTasks(),
        new_id=lambda: f"id-{next(ids)}",
    )


def _answer_of(actions: list[Any]) -> bytes:
    from a2a_core.transport import Answer

    return next(a.response.body for a in actions if isinstance(a, Answer))


#: Sends over which ``core`` counts function calls, after the timed ones (the count slows
#: every call down many times over: it is not timed).
COUNTED_SENDS = 200


class _CallCounter:
    """Function calls made while counting (``with``): Python's and C's, as cProfile counts
    them (a coroutine or generator resumed counts as a call, as it does there)."""

    def __init__(self) -> None:
        self.calls = 0

    def _event(self, frame: Any, event: str, arg: Any) -> None:
        if event == "call" or event == "c_call":
            self.calls += 1

    def __enter__(self) -> "_CallCounter":
        sys.setprofile(self._event)
        return self

    def __exit__(self, *exc: object) -> None:
        sys.setprofile(None)


def core_ours(count: int) -> dict[str, Any]:
    from a2a_core import ArtifactChunk, completed, text_artifact
    from a2a_core.transport import HttpRequest, Outputs, StartRun

    server = _machine()
    headers = {"content-type": "application/json", "a2a-version": "1.0"}
    epoch = datetime(2026, 1, 1, tzinfo=UTC)
    bodies = [_send_body(n) for n in range(count + COUNTED_SENDS)]

    def send(n: int) -> bytes:
        now = epoch + timedelta(microseconds=n)
        server.receive(HttpRequest("POST", "/", headers, bodies[n]), now, base_url="http://b")
        start = next(a for a in server.take_actions() if isinstance(a, StartRun))
        text = start.context.message.parts[0].text or ""
        chunk = ArtifactChunk(text_artifact(text, artifact_id="echo"), last_chunk=True)
        # As the adapters hand them over: yielded without a pause between, they go together.
        server.agent_output(start.task_id, start.run, Outputs((chunk, completed())), now)
        return _answer_of(server.take_actions())

    return _timed_sends(send, count)


def core_floor(count: int) -> dict[str, Any]:
    """The least any server must do for ``core``'s send, on our own codec: the request's JSON
    decoded and its message structured, the task's two versions built (created; its artifact
    and completion, which come together) and kept in a dict, the completed task encoded as the
    reply. No decision, check, index, idempotency, event log or effect: the floor under
    ``core ours``, which says how much of its time the design's guarantees take."""
    from a2a_core import Task, TaskState, TaskStatus, text_artifact
    from a2a_core._json import loads
    from a2a_core.decide._changes import in_task, with_artifacts
    from a2a_core.model._task import Message
    from a2a_core.wire._jsonrpc import result_body
    from a2a_core.wire._v1 import V1Codec

    codec = V1Codec()
    tasks: dict[str, Task] = {}
    epoch = datetime(2026, 1, 1, tzinfo=UTC)
    bodies = [_send_body(n) for n in range(count + COUNTED_SENDS)]

    def send(n: int) -> bytes:
        now = epoch + timedelta(microseconds=n)
        request = loads(bodies[n])
        message = codec.decode(Message, request["params"]["message"], "params.message")
        task_id, context_id = f"t-{n}", f"c-{n}"
        history = (in_task(message, task_id, context_id),)
        task = Task(
            task_id, TaskStatus(TaskState.SUBMITTED, timestamp=now), context_id, (), history
        )
        tasks[task_id] = task
        task = with_artifacts(task, (text_artifact(message.text, artifact_id="echo"),))
        status = TaskStatus(TaskState.COMPLETED, timestamp=now)
        task = Task(task_id, status, context_id, task.artifacts, task.history)
        tasks[task_id] = task
        return result_body(request["id"], codec.encode_event(task))

    return _timed_sends(send, count)


def _timed_sends(send: Callable[[int], bytes], count: int) -> dict[str, Any]:
    """``count`` sends timed, then the calls :data:`COUNTED_SENDS` more make."""
    started = time.perf_counter()
    for n in range(count):
        response = send(n)
    seconds = time.perf_counter() - started
    assert b"TASK_STATE_COMPLETED" in response, response
    with _CallCounter() as counted:
        for n in range(count, count + COUNTED_SENDS):
            send(n)
    return {
        "sends": count,
        "seconds": seconds,
        "per_second": count / seconds,
        "calls_per_send": counted.calls / COUNTED_SENDS,
    }


def followups_ours(count: int) -> dict[str, Any]:
    from a2a_core import input_required
    from a2a_core.transport import HttpRequest, StartRun

    headers = {"content-type": "application/json", "a2a-version": "1.0"}
    epoch = datetime(2026, 1, 1, tzinfo=UTC)

    def conversation(configuration: dict[str, Any]) -> dict[str, float]:
        # Unbounded, to show what a turn costs however long the task (the default refuses a
        # follow-up past max_task_messages).
        server = _machine(max_task_messages=None)
        clock = itertools.count()

        def turn(n: int, task_id: str) -> tuple[str, bytes]:
            message: dict[str, Any] = {
                "messageId": f"m-{n}",
                "role": "ROLE_USER",
                "parts": [{"text": f"turn {n}"}],
            }
            if task_id:
                message["taskId"] = task_id
            params = {"message": message, "configuration": configuration}
            body = {"jsonrpc": "2.0", "id": n, "method": "SendMessage", "params": params}
            now = epoch + timedelta(microseconds=next(clock))
            request = HttpRequest("POST", "/", headers, json.dumps(body).encode())
            server.receive(request, now, base_url="http://b")
            start = next(a for a in server.take_actions() if isinstance(a, StartRun))
            server.agent_done(start.task_id, start.run, now, value=input_required("and then?"))
            answer = _answer_of(server.take_actions())
            return start.context.task_id, answer

        task_id, _ = turn(0, "")
        spent: list[float] = []
        for n in range(1, count + 1):
            started = time.perf_counter()
            _, response = turn(n, task_id)
            spent.append(time.perf_counter() - started)
        assert b"TASK_STATE_INPUT_REQUIRED" in response, response
        first, last = statistics.fmean(spent[:100]), statistics.fmean(spent[-100:])
        return {"first_100_us": first * 1e6, "last_100_us": last * 1e6, "ratio": last / first}

    return {
        "followups": count,
        "history_length_0": conversation({"historyLength": 0}),
        "whole_history": conversation({}),
    }


def core_sdk(count: int) -> dict[str, Any]:
    from a2a.server.context import ServerCallContext
    from a2a.types import a2a_pb2 as pb
    from google.protobuf.json_format import MessageToDict, ParseDict

    from benchmarks.servers import sdk

    handler = sdk.handler(sdk.card(0))
    bodies = [_send_body(n) for n in range(count + COUNTED_SENDS)]

    async def send(raw: bytes) -> bytes:
        body = json.loads(raw)
        request = ParseDict(body["params"], pb.SendMessageRequest(), ignore_unknown_fields=True)
        task = await handler.on_message_send(request, ServerCallContext())
        result = MessageToDict(pb.SendMessageResponse(task=task))
        return json.dumps({"jsonrpc": "2.0", "id": body["id"], "result": result}).encode()

    async def run() -> tuple[float, bytes, int]:
        started = time.perf_counter()
        for raw in bodies[:count]:
            response = await send(raw)
        seconds = time.perf_counter() - started
        with _CallCounter() as counted:
            for raw in bodies[count:]:
                await send(raw)
        return seconds, response, counted.calls

    seconds, response, calls = asyncio.run(run())
    assert b"TASK_STATE_COMPLETED" in response, response
    return {
        "sends": count,
        "seconds": seconds,
        "per_second": count / seconds,
        "calls_per_send": calls / COUNTED_SENDS,
    }


# --- memory per stored task -------------------------------------------------------------------


async def _fill(send: Callable[[int], Awaitable[None]], first: int, count: int) -> None:
    for batch in range(first, first + count, IN_FLIGHT):
        await asyncio.gather(
            *(send(n) for n in range(batch, min(batch + IN_FLIGHT, first + count)))
        )


async def _measure_memory(send: Callable[[int], Awaitable[None]], count: int) -> dict[str, Any]:
    warmup = min(1000, count)
    await _fill(send, 0, warmup)  # code paths, caches and pools allocated before the baseline
    gc.collect()
    before = _rss_bytes()
    started = time.perf_counter()
    await _fill(send, warmup, count)
    seconds = time.perf_counter() - started
    gc.collect()
    after = _rss_bytes()
    return {
        "tasks": count,
        "rss_before": before,
        "rss_after": after,
        "bytes_per_task": (after - before) / count,
        "seconds": seconds,
    }


def memory_ours(count: int) -> dict[str, Any]:
    import anyio

    from a2a_core.transport import HttpRequest
    from benchmarks.servers.ours import engine

    headers = {"content-type": "application/json", "a2a-version": "1.0"}

    async def run() -> dict[str, Any]:
        server = engine()
        async with anyio.create_task_group() as group:
            await group.start(server.run)

            async def send(n: int) -> None:
                request = HttpRequest("POST", "/", headers, _send_body(n))
                response = await server.handle(request, "http://bench")
                assert b"TASK_STATE_COMPLETED" in getattr(response, "body", b"")

            result = await _measure_memory(send, count)
            result["stored"] = len(server.store)  # type: ignore[arg-type]
            await server.aclose()
        return result

    return asyncio.run(run())


def memory_sdk(count: int) -> dict[str, Any]:
    from a2a.server.context import ServerCallContext
    from a2a.types import a2a_pb2 as pb

    from benchmarks.servers import sdk

    handler = sdk.handler(sdk.card(0))

    async def send(n: int) -> None:
        message = pb.Message(message_id=f"m-{n}", role=pb.ROLE_USER, parts=[pb.Part(text="hello")])
        task = await handler.on_message_send(
            pb.SendMessageRequest(message=message), ServerCallContext()
        )
        assert task.status.state == pb.TASK_STATE_COMPLETED

    async def run() -> dict[str, Any]:
        result = await _measure_memory(send, count)
        listed = await handler.task_store.list(
            pb.ListTasksRequest(page_size=1), ServerCallContext()
        )
        result["stored"] = listed.total_size
        return result

    return asyncio.run(run())


def _fill_engine(server: Any, count: int, first: int = 0) -> Awaitable[None]:
    """``count`` blocking sends through ``server``, their message ids numbered from ``first``
    (a number sent before would be an idempotent re-send, making no task)."""
    from a2a_core.transport import HttpRequest

    headers = {"content-type": "application/json", "a2a-version": "1.0"}

    async def send(n: int) -> None:
        response = await server.handle(HttpRequest("POST", "/", headers, _send_body(n)), "http://b")
        assert b"TASK_STATE_COMPLETED" in getattr(response, "body", b"")

    return _fill(send, first, count)


def settled_sqlite_ours(count: int) -> dict[str, Any]:
    """Bytes on disk per settled echo task: ``count`` blocking sends through the engine on our
    SqliteStore (``synchronous=NORMAL``: what is written does not depend on it), measured once
    the store is closed (its write-ahead log checkpointed into the file)."""
    import anyio

    from a2a_adapters.stores import SqliteStore
    from benchmarks.servers.ours import engine

    with tempfile.TemporaryDirectory(prefix="a2a-bench-") as folder:
        path = Path(folder) / "tasks.db"
        SqliteStore(path, synchronous="NORMAL").close()
        empty = _disk_bytes(path)
        store = SqliteStore(path, synchronous="NORMAL")

        async def run() -> None:
            server = engine(store)
            async with anyio.create_task_group() as group:
                await group.start(server.run)
                await _fill_engine(server, count)
                await server.aclose()

        try:
            asyncio.run(run())
        finally:
            store.close()
        stored = _disk_bytes(path)
    return {"tasks": count, "disk_bytes": stored, "bytes_per_task": (stored - empty) / count}


def settled_sqlite_sdk(count: int) -> dict[str, Any]:
    """The same for the SDK: ``count`` sends through its request handler on its SQL store."""
    from a2a.server.context import ServerCallContext
    from a2a.types import a2a_pb2 as pb

    from benchmarks.servers import sdk

    with tempfile.TemporaryDirectory(prefix="a2a-bench-") as folder:
        path = Path(folder) / "tasks.db"

        async def run() -> int:
            store = sdk.database_store(str(path))
            await store.initialize()
            empty = _disk_bytes(path)
            handler = sdk.handler(sdk.card(0), task_store=store)

            async def send(n: int) -> None:
                parts = [pb.Part(text="hello")]
                message = pb.Message(message_id=f"m-{n}", role=pb.ROLE_USER, parts=parts)
                request = pb.SendMessageRequest(message=message)
                task = await handler.on_message_send(request, ServerCallContext())
                assert task.status.state == pb.TASK_STATE_COMPLETED

            await _fill(send, 0, count)
            await store.engine.dispose()
            return empty

        empty = asyncio.run(run())
        with sqlite3.connect(path) as db:  # as the harness measures a file: its log folded in
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        db.close()
        stored = _disk_bytes(path)
    return {"tasks": count, "disk_bytes": stored, "bytes_per_task": (stored - empty) / count}


def settled_redis_ours(count: int) -> dict[str, Any]:
    """Redis's ``used_memory`` per settled echo task: ``count`` blocking sends through the
    engine on our RedisStore, on a Redis of its own (``redis-server``, no persistence)."""
    import anyio
    import coredis

    from a2a_adapters.stores import RedisStore
    from benchmarks.servers.ours import engine
    from tests.a2a_adapters.redis_server import RedisServer

    async def used(url: str) -> int:
        async with coredis.Redis.from_url(url, decode_responses=True) as client:
            return int(str((await client.info("memory"))["used_memory"]))

    async def run(url: str) -> dict[str, Any]:
        store = RedisStore(url)
        server = engine(store)
        async with anyio.create_task_group() as group:
            await group.start(server.run)
            warmup = min(1000, count)
            await _fill_engine(server, warmup)  # the store's scripts loaded first
            before = await used(url)
            started = time.perf_counter()
            await _fill_engine(server, count, first=warmup)
            seconds = time.perf_counter() - started
            after = await used(url)
            await server.aclose()
        return {"tasks": count, "bytes_per_task": (after - before) / count, "seconds": seconds}

    with RedisServer() as redis:
        return asyncio.run(run(redis.url))


# --- store latency ----------------------------------------------------------------------------


async def _timed(operation: Callable[[int], Awaitable[Any]], ops: int, budget: float) -> float:
    """Seconds per call of ``operation``: the median of :data:`ROUNDS` rounds' means, over up
    to ``ops`` calls in all (or ``budget`` seconds), so that one stall does not make the
    figure."""
    deadline = time.perf_counter() + budget
    means = []
    done = 0
    per_round = max(1, ops // ROUNDS)
    while done < ops and time.perf_counter() < deadline:
        started, first = time.perf_counter(), done
        while done < min(ops, first + per_round) and time.perf_counter() < deadline:
            await operation(done)
            done += 1
        means.append((time.perf_counter() - started) / (done - first))
    return statistics.median(means)


Operation = Callable[[int], Awaitable[Any]]


async def _store_figures(
    count: int, get: Operation, save: Operation, list_page: Operation, ops: int = 0
) -> dict[str, Any]:
    """Mean microseconds of each store operation (over up to ``ops`` calls, :data:`OPS` unless
    told)."""
    ops = ops or OPS
    return {
        "tasks": count,
        "get_us": await _timed(get, ops, BUDGET) * 1e6,
        "save_us": await _timed(save, ops, BUDGET) * 1e6,
        "list_us": await _timed(list_page, ops, BUDGET) * 1e6,
    }


def _ours_record(n: int) -> Any:
    """Completed task number ``n`` as our stores keep it (a record, no event log)."""
    from a2a_core import Message, Part, Role, Task, TaskState, TaskStatus, text_artifact
    from a2a_core.store import Owner, TaskRecord, message_fingerprint

    message = Message(
        message_id=f"m-{n}", role=Role.USER, parts=(Part(text="hello"),), task_id=f"t-{n}"
    )
    status = TaskStatus(TaskState.COMPLETED, timestamp=EPOCH + timedelta(microseconds=n))
    task = Task(
        f"t-{n}",
        status,
        context_id=f"c-{n}",
        artifacts=(text_artifact("hello", artifact_id="echo"),),
        history=(message,),
    )
    fingerprint = message_fingerprint(message)
    return TaskRecord(
        task,
        Owner("anonymous"),
        1,
        EPOCH,
        run=1,
        seq=3,
        messages=((message.message_id, fingerprint),),
    )


class _Records:
    """``count`` completed tasks (:func:`_ours_record`), each built when asked for; one set
    (a new version) is kept. A benchmark at a million tasks then holds what the store holds
    and no more: a list of a million records beside it took gigabytes, and its scattered
    objects slowed every read the store timed."""

    def __init__(self, count: int) -> None:
        self._count = count
        self._changed: dict[int, Any] = {}

    def __len__(self) -> int:
        return self._count

    def __getitem__(self, index: int) -> Any:
        found = self._changed.get(index)
        return found if found is not None else _ours_record(index)

    def __setitem__(self, index: int, record: Any) -> None:
        self._changed[index] = record

    def changed(self, index: int) -> bool:
        """Whether record ``index`` was given a new version (:meth:`__setitem__`)."""
        return index in self._changed

    def status_changes(self, picks: list[int], later: datetime) -> list[list[Any]]:
        """A commit for each record of ``picks``: its status stamped anew from ``later`` on (a
        microsecond apart), which moves the task in the listing order (a re-index each). The
        new versions are kept, so that a commit after them expects theirs."""
        import attrs

        from a2a_core.store import Put

        puts = []
        for i, n in enumerate(picks):
            old = self[n]
            status = attrs.evolve(old.task.status, timestamp=later + timedelta(microseconds=i))
            task = attrs.evolve(old.task, status=status)
            self[n] = attrs.evolve(old, task=task, version=old.version + 1)
            puts.append([Put(self[n], old.version)])
        return puts

    def batch(self, first: int, size: int) -> list[Any]:
        return [self[n] for n in range(first, min(first + size, self._count))]


def _ours_records(count: int) -> _Records:
    """``count`` completed tasks as our stores keep them (records, no event log)."""
    return _Records(count)


#: When the stored tasks' clocks start.
EPOCH = datetime(2026, 1, 1, tzinfo=UTC)


async def _ours_figures(
    store: Any, records: _Records, fill: Callable[[], Awaitable[None]], ops: int = 0
) -> dict[str, Any]:
    """get, save and list on one of our stores, filled by ``fill`` with ``records``."""
    from a2a_core.store import ListQuery, Owner, Reads

    count = len(records)
    ops = ops or OPS
    await fill()
    picks = [random.randrange(count) for _ in range(ops)]
    reads = [Reads(task_id=f"t-{n}") for n in picks]
    puts = records.status_changes(picks, EPOCH + timedelta(days=1))
    listing = Reads(listing=ListQuery(Owner("anonymous"), PAGE))

    async def get(i: int) -> None:
        await store.read(reads[i])

    async def save(i: int) -> None:
        assert await store.commit(puts[i])

    async def list_page(_: int) -> None:
        await store.read(listing)

    return await _store_figures(count, get, save, list_page, ops)


def store_ours(count: int) -> dict[str, Any]:
    from a2a_adapters.stores import MemoryStore
    from a2a_core.store import Put

    store = MemoryStore()
    records = _ours_records(count)

    async def fill() -> None:
        for n in range(count):
            assert await store.commit([Put(records[n], 0)])

    return asyncio.run(_ours_figures(store, records, fill))


async def fill_in_batches(store: Any, records: _Records, filled: dict[str, Any]) -> None:
    """Store ``records`` as new tasks, :data:`FILL_BATCH` to a commit (one transaction each on
    SQLite, rather than one fsync a task), noting the seconds it took in ``filled``."""
    from a2a_core.store import Put

    started = time.perf_counter()
    for first in range(0, len(records), FILL_BATCH):
        batch = records.batch(first, FILL_BATCH)
        assert await store.commit([Put(r, 0) for r in batch])
    filled["fill_seconds"] = time.perf_counter() - started


def _disk_bytes(path: Path) -> int:
    """Bytes of a closed SQLite file and whatever journal or log it left beside it."""
    return sum(p.stat().st_size for p in path.parent.glob(path.name + "*") if p.is_file())


def sqlite_ours(count: int, synchronous: str, ops: int) -> dict[str, Any]:
    """Our SqliteStore on a fresh file: its latencies, then its bytes on disk per task.

    Filled through the store contract, :data:`FILL_BATCH` records to a commit (one
    transaction each; a commit takes any number of writes), so the 100,000 rows take seconds
    rather than one fsync each."""
    from a2a_adapters.stores import SqliteStore

    records = _ours_records(count)
    with tempfile.TemporaryDirectory(prefix="a2a-bench-") as folder:
        path = Path(folder) / "tasks.db"
        store = SqliteStore(path, synchronous=synchronous)
        store.close()
        empty = _disk_bytes(path)
        store = SqliteStore(path, synchronous=synchronous)

        filled: dict[str, Any] = {}

        async def fill() -> None:
            await fill_in_batches(store, records, filled)

        try:
            result = asyncio.run(_ours_figures(store, records, fill, ops))
        finally:
            store.close()  # checkpoints the write-ahead log into the file
        stored = _disk_bytes(path)
    return {
        **result,
        **filled,
        "synchronous": synchronous,
        "journal_mode": "wal",
        "disk_bytes": stored,
        "empty_bytes": empty,
        "bytes_per_task": (stored - empty) / count,
    }


async def _sdk_figures(store: Any, tasks: list[Any], ops: int = 0) -> dict[str, Any]:
    """get, save and list on one of the SDK's stores, holding ``tasks``."""
    from a2a.server.context import ServerCallContext
    from a2a.types import a2a_pb2 as pb

    context = ServerCallContext()
    ops = ops or OPS
    picks = [random.randrange(len(tasks)) for _ in range(ops)]
    ids = [f"t-{n}" for n in picks]
    updates = []
    for i, n in enumerate(picks):
        updated = pb.Task()
        updated.CopyFrom(tasks[n])
        updated.status.timestamp.FromDatetime(datetime(2026, 1, 2) + timedelta(microseconds=i))
        updates.append(updated)

    async def get(i: int) -> None:
        await store.get(ids[i], context)

    async def save(i: int) -> None:
        await store.save(updates[i], context)

    async def list_page(_: int) -> None:
        await store.list(pb.ListTasksRequest(page_size=PAGE), context)

    return await _store_figures(len(tasks), get, save, list_page, ops)


def store_sdk(count: int) -> dict[str, Any]:
    from a2a.server.context import ServerCallContext
    from a2a.server.tasks import InMemoryTaskStore

    store = InMemoryTaskStore()
    context = ServerCallContext()

    async def run() -> dict[str, Any]:
        tasks = _sdk_tasks(count)
        for t in tasks:
            await store.save(t, context)
        return await _sdk_figures(store, tasks)

    return asyncio.run(run())


def _sdk_tasks(count: int) -> list[Any]:
    from a2a.types import a2a_pb2 as pb

    def task(n: int) -> Any:
        message = pb.Message(
            message_id=f"m-{n}", role=pb.ROLE_USER, parts=[pb.Part(text="hello")], task_id=f"t-{n}"
        )
        result = pb.Task(
            id=f"t-{n}",
            context_id=f"c-{n}",
            status=pb.TaskStatus(state=pb.TASK_STATE_COMPLETED),
            artifacts=[pb.Artifact(artifact_id="echo", parts=[pb.Part(text="hello")])],
            history=[message],
        )
        result.status.timestamp.FromDatetime(datetime(2026, 1, 1) + timedelta(microseconds=n))
        return result

    return [task(n) for n in range(count)]


def sqlite_sdk(count: int, ops: int) -> dict[str, Any]:
    """The SDK's DatabaseTaskStore on a fresh SQLite file through aiosqlite: its latencies, then
    its bytes on disk per task.

    ``save`` opens a session and a transaction per task (hours for 100,000 at an fsync or more
    each), so the fill adds the very rows ``save`` would write (the store's own ``_to_orm``
    mapping, for the owner ``save`` resolves), :data:`FILL_BATCH` to a transaction, in
    SQLAlchemy sessions from the store's own session maker."""
    from a2a.server.context import ServerCallContext
    from sqlalchemy import text

    from benchmarks.servers.sdk import database_store

    context = ServerCallContext()
    tasks = _sdk_tasks(count)

    async def run(path: Path) -> dict[str, Any]:
        store = database_store(str(path))
        await store.initialize()
        async with store.engine.connect() as connection:
            journal = (await connection.execute(text("PRAGMA journal_mode"))).scalar()
            synchronous = (await connection.execute(text("PRAGMA synchronous"))).scalar()
        await store.engine.dispose()
        empty = _disk_bytes(path)
        owner = store.owner_resolver(context)
        started = time.perf_counter()
        for first in range(0, count, FILL_BATCH):
            async with store.async_session_maker.begin() as session:
                session.add_all(
                    [store._to_orm(t, owner) for t in tasks[first : first + FILL_BATCH]]
                )
        fill_seconds = time.perf_counter() - started
        assert await store.get(f"t-{count - 1}", context) is not None
        try:
            result = await _sdk_figures(store, tasks, ops)
        finally:
            await store.engine.dispose()
        stored = _disk_bytes(path)
        return {
            **result,
            "fill_seconds": fill_seconds,
            # PRAGMA synchronous answers a number: 0 OFF, 1 NORMAL, 2 FULL, 3 EXTRA.
            "synchronous": {0: "OFF", 1: "NORMAL", 2: "FULL", 3: "EXTRA"}[int(synchronous)],
            "journal_mode": str(journal).lower(),
            "disk_bytes": stored,
            "empty_bytes": empty,
            "bytes_per_task": (stored - empty) / count,
        }

    with tempfile.TemporaryDirectory(prefix="a2a-bench-") as folder:
        return asyncio.run(run(Path(folder) / "tasks.db"))


#: Calls timed per store operation (in rounds), and the seconds each operation may take.
OPS = 2000
ROUNDS = 5
BUDGET = 5.0
#: Tasks written per transaction while a SQLite benchmark fills its file.
FILL_BATCH = 1000

BENCHMARKS: dict[tuple[str, str], Callable[[int], dict[str, Any]]] = {
    ("core", "ours"): core_ours,
    ("core", "a2a-sdk"): core_sdk,
    ("core", "floor"): core_floor,
    ("memory", "ours"): memory_ours,
    ("memory", "a2a-sdk"): memory_sdk,
    ("settled-sqlite", "ours"): settled_sqlite_ours,
    ("settled-sqlite", "a2a-sdk"): settled_sqlite_sdk,
    ("settled-redis", "ours"): settled_redis_ours,
    ("store", "ours"): store_ours,
    ("store", "a2a-sdk"): store_sdk,
    ("followups", "ours"): followups_ours,
}
#: The SQLite stores (``sqlite NAME COUNT OPS``): ours at either durability, and the SDK's.
SQLITE_STORES: dict[str, Callable[[int, int], dict[str, Any]]] = {
    "ours-full": lambda count, ops: sqlite_ours(count, "FULL", ops),
    "ours-normal": lambda count, ops: sqlite_ours(count, "NORMAL", ops),
    "a2a-sdk": sqlite_sdk,
}


def run_in_subprocess(benchmark: str, server: str, count: int, *extra: int) -> dict[str, Any]:
    """Run one in-process benchmark in a fresh interpreter; return what it measured."""
    import subprocess

    command = [sys.executable, "-m", "benchmarks.inprocess", benchmark, server, str(count)]
    command += [str(e) for e in extra]
    output = subprocess.run(command, check=True, capture_output=True, text=True, timeout=900)
    result: dict[str, Any] = json.loads(output.stdout.strip().splitlines()[-1])
    return result


if __name__ == "__main__":
    name, server, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    if name == "sqlite":
        print(json.dumps(SQLITE_STORES[server](count, int(sys.argv[4]))))
    else:
        print(json.dumps(BENCHMARKS[name, server](count)))
