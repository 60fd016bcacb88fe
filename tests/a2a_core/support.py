"""Shared helpers for the core's tests: a dict-backed store, a driver, and wire strategies.

Nothing here runs an event loop. :class:`FakeStore` plays the adapter's store (compare-and-set
on versions, newest-first pages by :class:`ListQuery`), and :class:`Harness` runs the core's
read-decide-commit loop over it with a fixed clock and counter-based ids, so every test is
deterministic and can be replayed exactly.
"""

import json
import string
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import strategies as st

from a2a_core import (
    Artifact,
    AuthenticationInfo,
    CancelTaskRequest,
    Core,
    CoreConfig,
    GetTaskRequest,
    ListTasksRequest,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    Task,
    TaskArtifactUpdateEvent,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from a2a_core.card import AgentCard
from a2a_core.decisions import (
    AwaitTask,
    Call,
    Decision,
    Fail,
    Input,
    Operation,
    Publish,
    Respond,
    Tick,
    World,
)
from a2a_core.errors import A2AError
from a2a_core.model._card import (
    AgentCapabilities,
    AgentCardSignature,
    AgentExtension,
    AgentInterface,
    AgentProvider,
    AgentSkill,
    APIKeySecurityScheme,
    AuthorizationCodeOAuthFlow,
    ClientCredentialsOAuthFlow,
    DeviceCodeOAuthFlow,
    HTTPAuthSecurityScheme,
    ImplicitOAuthFlow,
    MutualTlsSecurityScheme,
    OAuth2SecurityScheme,
    OAuthFlow,
    OpenIdConnectSecurityScheme,
    PasswordOAuthFlow,
    SecurityRequirement,
    SecurityScheme,
)
from a2a_core.model._requests import (
    DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest,
    ListTaskPushNotificationConfigsRequest,
    SubscribeToTaskRequest,
)
from a2a_core.store import (
    Cursor,
    Delete,
    Expired,
    ExpiryQuery,
    ListQuery,
    LoggedEvent,
    MessageKey,
    Page,
    Put,
    Reads,
    Sent,
    Snapshot,
    TaskRecord,
    Write,
)
from a2a_core.transport import Caller, HttpRequest, StartRun

#: The fixed start of every test's clock.
EPOCH = datetime(2025, 1, 1, 12, 0, 0, tzinfo=UTC)

CARD = AgentCard(name="Test agent", description="An agent for tests", version="1.2.3")

#: The JSON-RPC methods of v1.0, as the front knows them.
METHODS = (
    "SendMessage",
    "SendStreamingMessage",
    "GetTask",
    "ListTasks",
    "CancelTask",
    "SubscribeToTask",
    "CreateTaskPushNotificationConfig",
    "GetTaskPushNotificationConfig",
    "ListTaskPushNotificationConfigs",
    "DeleteTaskPushNotificationConfig",
    "GetExtendedAgentCard",
)

#: Headers of a well-formed v1.0 JSON-RPC request.
RPC_HEADERS: Mapping[str, str] = {"content-type": "application/json", "a2a-version": "1.0"}


def make_core(**options: Any) -> Core:
    """A core over the test card, with ``options`` passed to :class:`CoreConfig`."""
    options.setdefault("card", CARD)
    return Core(CoreConfig(**options))


# --- the store --------------------------------------------------------------------------------


class FakeStore:
    """Records in a dict; writes are compare-and-set on the stored version.

    It keeps the whole store contract of ``a2a_core.store._contract`` the simple way (by
    scanning): message ids unique per owner, an event log per task, newest-first pages and the
    expiry query.
    """

    def __init__(self) -> None:
        self.records: dict[str, TaskRecord] = {}
        self.logs: dict[str, list[LoggedEvent]] = {}

    def snapshot(self, reads: Reads) -> Snapshot:
        """What an adapter's store would return for ``reads``."""
        task = self.records.get(reads.task_id) if reads.task_id else None
        named = self.records.get(reads.named) if reads.named else None
        by_message = self.holder(reads.message) if reads.message is not None else None
        page = self.page(reads.listing) if reads.listing is not None else None
        expired = self.expired(reads.expiry) if reads.expiry is not None else None
        log: tuple[LoggedEvent, ...] = ()
        if reads.log is not None:
            events = self.logs.get(reads.log.task_id, [])
            log = tuple(events[reads.log.after : reads.log.after + reads.log.limit])
        return Snapshot(
            task=task, named=named, by_message=by_message, page=page, expired=expired, log=log
        )

    def holder(self, key: MessageKey) -> TaskRecord | None:
        """The task of ``key.owner`` that accepted the message ``key.message_id``."""
        return next(
            (
                r
                for r in self.records.values()
                if r.owner == key.owner and r.fingerprint(key.message_id) is not None
            ),
            None,
        )

    def page(self, query: ListQuery) -> Page:
        """The records ``query`` matches, newest status first, after its cursor."""
        matching = sorted(
            (r for r in self.records.values() if query.matches(r)),
            key=lambda r: (r.updated_at, r.id),
            reverse=True,
        )
        cursor = query.cursor
        after = [r for r in matching if cursor is None or Cursor(r.updated_at, r.id) < cursor]
        page = after[: query.page_size]
        more = len(after) > query.page_size
        next_cursor = Cursor(page[-1].updated_at, page[-1].id) if more and page else None
        return Page(tuple(page), len(matching), next_cursor)

    def expired(self, query: ExpiryQuery) -> Expired:
        """The oldest terminal tasks not newer than ``query.before``, and when the next one is."""
        terminal = sorted(
            (r for r in self.records.values() if r.state.terminal),
            key=lambda r: (r.updated_at, r.id),
        )
        old = [r for r in terminal if r.updated_at <= query.before][: query.limit]
        rest = terminal[len(old) :]
        return Expired(tuple(old), rest[0].updated_at if rest else None)

    def commit(self, writes: Sequence[Write]) -> bool:
        """Apply every write, or none if one's expected version is stale (checked in order:
        a Delete frees its key for a later Put) or an id is taken."""
        deleted = {w.task_id for w in writes if isinstance(w, Delete)}
        versions = {key: record.version for key, record in self.records.items()}
        for write in writes:
            if isinstance(write, Sent):
                continue  # the outbox: no version, and no part of what decisions read here
            task_id = write.record.id if isinstance(write, Put) else write.task_id
            if versions.get(task_id, 0) != write.expected:
                return False
            versions[task_id] = write.record.version if isinstance(write, Put) else 0
            if isinstance(write, Put):
                for message_id, _ in write.record.messages:
                    holder = self.holder(MessageKey(write.record.owner, message_id))
                    if holder is not None and holder.id not in (task_id, *deleted):
                        return False
        for write in writes:
            match write:
                case Put(record=record, events=events):
                    log = self.logs.setdefault(record.id, [])
                    assert [e.seq for e in events] == list(
                        range(len(log) + 1, len(log) + 1 + len(events))
                    ), "logged events continue the task's log without a gap"
                    log.extend(events)
                    self.records[record.id] = record
                case Delete(task_id=task_id):
                    self.records.pop(task_id, None)
                    self.logs.pop(task_id, None)
        return True


# --- driving the core -------------------------------------------------------------------------


class Ids:
    """A deterministic id source: ``id-1``, ``id-2``, …"""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self) -> str:
        self.count += 1
        return f"id-{self.count}"


class Harness:
    """A core, a fake store, a clock and ids: the adapter's loop without any I/O."""

    def __init__(self, core: Core | None = None, *, step: timedelta = timedelta(seconds=1)):
        self.core = core or make_core()
        self.store = FakeStore()
        self.ids = Ids()
        self.now = EPOCH
        self.step = step
        self.sent = 0

    def context(self) -> World:
        return World(now=self.now, new_id=self.ids)

    def decide(self, inp: Input) -> Decision:
        """Read, decide and commit ``inp``; the clock then moves on by ``step``."""
        snapshot = self.store.snapshot(self.core.needs(inp))
        decision = self.core.decide(inp, snapshot, self.context())
        assert self.store.commit(decision.writes), "a single decider never conflicts"
        self.now += self.step
        return decision

    def call(self, operation: Operation, request: Any, principal: str = "alice") -> Decision:
        return self.decide(Call(operation, request, Caller(principal)))

    def send(
        self,
        text: str = "hello",
        *,
        principal: str = "alice",
        task_id: str = "",
        context_id: str = "",
        blocking: bool = True,
        history_length: int | None = None,
        parts: tuple[Part, ...] | None = None,
        tenant: str = "",
        metadata: Mapping[str, Any] | None = None,
        accepted_output_modes: tuple[str, ...] = (),
        message_id: str = "",
        operation: Operation = Operation.SEND_MESSAGE,
    ) -> Decision:
        self.sent += 1
        message = Message(
            message_id=message_id or f"msg-{self.sent}",
            role=Role.USER,
            parts=parts if parts is not None else (Part(text=text),),
            task_id=task_id,
            context_id=context_id,
        )
        configuration = SendMessageConfiguration(
            accepted_output_modes=accepted_output_modes,
            history_length=history_length,
            return_immediately=not blocking,
        )
        request = SendMessageRequest(
            message, tenant=tenant, configuration=configuration, metadata=metadata
        )
        return self.call(operation, request, principal)

    def create(self, text: str = "hello", *, principal: str = "alice", **options: Any) -> str:
        """Send a new message; the id of the task it created."""
        decision = self.send(text, principal=principal, **options)
        return created_id(decision)

    def get(
        self, task_id: str, principal: str = "alice", history_length: int | None = None
    ) -> Decision:
        return self.call(
            Operation.GET_TASK, GetTaskRequest(task_id, history_length=history_length), principal
        )

    def cancel(self, task_id: str, principal: str = "alice") -> Decision:
        return self.call(Operation.CANCEL_TASK, CancelTaskRequest(task_id), principal)

    def list(self, principal: str = "alice", **options: Any) -> Decision:
        return self.call(Operation.LIST_TASKS, ListTasksRequest(**options), principal)

    def tick(self) -> Decision:
        return self.decide(Tick(self.now))

    def record(self, task_id: str) -> TaskRecord:
        return self.store.records[task_id]

    def task(self, task_id: str) -> Task:
        return self.record(task_id).task


def created_id(decision: Decision) -> str:
    """The id of the task a successful new send wrote."""
    (write,) = decision.writes
    assert isinstance(write, Put)
    assert write.expected == 0
    return write.record.id


def start_of(decision: Decision) -> StartRun:
    """The decision's only StartRun effect."""
    (start,) = [e for e in decision.effects if isinstance(e, StartRun)]
    return start


def publishes(decision: Decision) -> list[Publish]:
    return [e for e in decision.effects if isinstance(e, Publish)]


def responded(decision: Decision) -> Any:
    """The value of a Respond reply (fails the test for any other reply)."""
    assert isinstance(decision.reply, Respond), decision.reply
    return decision.reply.value


def failed_with(decision: Decision) -> A2AError:
    """The error of a Fail reply, after checking that nothing was written or done."""
    assert isinstance(decision.reply, Fail), decision.reply
    assert decision.writes == ()
    assert decision.effects == ()
    return decision.reply.error


def awaited(decision: Decision) -> AwaitTask:
    assert isinstance(decision.reply, AwaitTask), decision.reply
    return decision.reply


# --- HTTP helpers -----------------------------------------------------------------------------


def rpc_body(method: str, params: Any = None, rpc_id: Any = 1) -> bytes:
    envelope: dict[str, Any] = {"jsonrpc": "2.0", "id": rpc_id, "method": method}
    if params is not None:
        envelope["params"] = params
    return json.dumps(envelope).encode()


def rpc_request(
    method: str,
    params: Any = None,
    rpc_id: Any = 1,
    *,
    headers: Mapping[str, str] = RPC_HEADERS,
    query: str = "",
) -> HttpRequest:
    return HttpRequest("POST", "/", dict(headers), rpc_body(method, params, rpc_id), query)


def user_message_json(text: str = "hi", **fields: Any) -> dict[str, Any]:
    return {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": text}], **fields}


def strict_json(body: bytes) -> Any:
    """Parse JSON as RFC 8259 defines it (no NaN or Infinity)."""

    def reject(constant: str) -> Any:
        raise ValueError(f"{constant} is not JSON")

    return json.loads(body, parse_constant=reject)


# --- wire strategies --------------------------------------------------------------------------

#: Short, printable-ish strings; hypothesis still explores unicode through st.text().
words = st.text(min_size=0, max_size=8)
ids = st.text(alphabet=string.ascii_letters + string.digits + "-_", min_size=1, max_size=12)
int32 = st.integers(min_value=-(2**31), max_value=2**31 - 1)
non_negative_int32 = st.integers(min_value=0, max_value=2**31 - 1)

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53), max_value=2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | words
)
json_values: st.SearchStrategy[Any] = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(words, inner, max_size=3),
    max_leaves=8,
)
metadata = st.none() | st.dictionaries(words, json_values, max_size=3)
string_maps = st.dictionaries(words, words, max_size=3)
string_tuples = st.lists(words, max_size=3).map(tuple)

#: Timezone-aware UTC datetimes at millisecond precision (what ProtoJSON can carry).
timestamps = st.datetimes(
    min_value=datetime(1970, 1, 1), max_value=datetime(9999, 12, 31), timezones=st.just(UTC)
).map(lambda d: d.replace(microsecond=d.microsecond // 1000 * 1000))


@st.composite
def parts(draw: st.DrawFn) -> Part:
    """A Part with exactly one content member."""
    content = draw(
        st.one_of(
            st.builds(lambda t: {"text": t}, words),
            st.builds(lambda b: {"raw": b}, st.binary(max_size=12)),
            st.builds(lambda u: {"url": u}, words),
            st.builds(lambda d: {"data": d}, json_values.filter(lambda v: v is not None)),
        )
    )
    return Part(
        **content,
        metadata=draw(metadata),
        filename=draw(words),
        media_type=draw(st.sampled_from(["", "text/plain", "application/json", "image/png"])),
    )


part_tuples = st.lists(parts(), min_size=1, max_size=3).map(tuple)

messages = st.builds(
    Message,
    message_id=ids,
    role=st.sampled_from(Role),
    parts=part_tuples,
    context_id=words,
    task_id=words,
    metadata=metadata,
    extensions=string_tuples,
    reference_task_ids=string_tuples,
)

artifacts = st.builds(
    Artifact,
    artifact_id=ids,
    parts=part_tuples,
    name=words,
    description=words,
    metadata=metadata,
    extensions=string_tuples,
)

statuses = st.builds(
    TaskStatus,
    state=st.sampled_from(TaskState),
    message=st.none() | messages,
    timestamp=st.none() | timestamps,
)

tasks = st.builds(
    Task,
    id=ids,
    status=statuses,
    context_id=words,
    artifacts=st.lists(artifacts, max_size=2).map(tuple),
    history=st.lists(messages, max_size=2).map(tuple),
    metadata=metadata,
)

status_updates = st.builds(
    TaskStatusUpdateEvent, task_id=ids, context_id=ids, status=statuses, metadata=metadata
)
artifact_updates = st.builds(
    TaskArtifactUpdateEvent,
    task_id=ids,
    context_id=ids,
    artifact=artifacts,
    append=st.booleans(),
    last_chunk=st.booleans(),
    metadata=metadata,
)

push_configs = st.builds(
    TaskPushNotificationConfig,
    url=words,
    tenant=words,
    id=words,
    task_id=words,
    token=words,
    authentication=st.none() | st.builds(AuthenticationInfo, scheme=words, credentials=words),
)

send_configurations = st.builds(
    SendMessageConfiguration,
    accepted_output_modes=string_tuples,
    task_push_notification_config=st.none() | push_configs,
    history_length=st.none() | int32,
    return_immediately=st.booleans(),
)

requests: st.SearchStrategy[Any] = st.one_of(
    st.builds(
        SendMessageRequest,
        message=messages,
        tenant=words,
        configuration=st.none() | send_configurations,
        metadata=metadata,
    ),
    st.builds(GetTaskRequest, id=ids, tenant=words, history_length=st.none() | int32),
    st.builds(
        ListTasksRequest,
        tenant=words,
        context_id=words,
        status=st.sampled_from(TaskState),
        page_size=st.none() | int32,
        page_token=words,
        history_length=st.none() | int32,
        status_timestamp_after=st.none() | timestamps,
        include_artifacts=st.none() | st.booleans(),
    ),
    st.builds(CancelTaskRequest, id=ids, tenant=words, metadata=metadata),
    st.builds(SubscribeToTaskRequest, id=ids, tenant=words),
    st.builds(GetTaskPushNotificationConfigRequest, task_id=ids, id=ids, tenant=words),
    st.builds(DeleteTaskPushNotificationConfigRequest, task_id=ids, id=ids, tenant=words),
    st.builds(
        ListTaskPushNotificationConfigsRequest,
        task_id=ids,
        tenant=words,
        page_size=int32,
        page_token=words,
    ),
    st.builds(GetExtendedAgentCardRequest, tenant=words),
    push_configs,
)

oauth_flows: st.SearchStrategy[OAuthFlow] = st.one_of(
    st.builds(
        AuthorizationCodeOAuthFlow,
        authorization_url=words,
        token_url=words,
        scopes=string_maps,
        refresh_url=words,
        pkce_required=st.booleans(),
    ),
    st.builds(ClientCredentialsOAuthFlow, token_url=words, scopes=string_maps, refresh_url=words),
    st.builds(
        DeviceCodeOAuthFlow,
        device_authorization_url=words,
        token_url=words,
        scopes=string_maps,
        refresh_url=words,
    ),
    st.builds(ImplicitOAuthFlow, authorization_url=words, refresh_url=words, scopes=string_maps),
    st.builds(PasswordOAuthFlow, token_url=words, refresh_url=words, scopes=string_maps),
)

security_schemes: st.SearchStrategy[SecurityScheme] = st.one_of(
    st.builds(APIKeySecurityScheme, location=words, name=words, description=words),
    st.builds(HTTPAuthSecurityScheme, scheme=words, description=words, bearer_format=words),
    st.builds(
        OAuth2SecurityScheme, flows=oauth_flows, description=words, oauth2_metadata_url=words
    ),
    st.builds(OpenIdConnectSecurityScheme, open_id_connect_url=words, description=words),
    st.builds(MutualTlsSecurityScheme, description=words),
)

security_requirements = st.builds(
    SecurityRequirement, schemes=st.dictionaries(words, string_tuples, max_size=2)
)

skills = st.builds(
    AgentSkill,
    id=ids,
    name=words,
    description=words,
    tags=string_tuples,
    examples=string_tuples,
    input_modes=string_tuples,
    output_modes=string_tuples,
    security_requirements=st.lists(security_requirements, max_size=2).map(tuple),
)

cards = st.builds(
    AgentCard,
    name=words,
    description=words,
    version=words,
    supported_interfaces=st.lists(
        st.builds(
            AgentInterface,
            url=words,
            protocol_binding=st.sampled_from(["JSONRPC", "HTTP+JSON", "GRPC"]),
            protocol_version=st.just("1.0"),
            tenant=words,
        ),
        max_size=2,
    ).map(tuple),
    capabilities=st.builds(
        AgentCapabilities,
        streaming=st.none() | st.booleans(),
        push_notifications=st.none() | st.booleans(),
        extensions=st.lists(
            st.builds(
                AgentExtension,
                uri=words,
                description=words,
                required=st.booleans(),
                params=metadata,
            ),
            max_size=2,
        ).map(tuple),
        extended_agent_card=st.none() | st.booleans(),
    ),
    default_input_modes=string_tuples,
    default_output_modes=string_tuples,
    skills=st.lists(skills, max_size=2).map(tuple),
    provider=st.none() | st.builds(AgentProvider, url=words, organization=words),
    documentation_url=st.none() | words,
    security_schemes=st.dictionaries(words, security_schemes, max_size=3),
    security_requirements=st.lists(security_requirements, max_size=2).map(tuple),
    signatures=st.lists(
        st.builds(AgentCardSignature, protected=words, signature=words, header=metadata),
        max_size=1,
    ).map(tuple),
    icon_url=st.none() | words,
)

#: Every model value that has a wire form, for the round-trip property.
wire_values: st.SearchStrategy[Any] = st.one_of(
    parts(),
    messages,
    artifacts,
    statuses,
    tasks,
    status_updates,
    artifact_updates,
    push_configs,
    requests,
    cards,
)
