"""The public face of ``a2a_core``: each namespace exports exactly the names it means to.

A name in ``__all__`` is a promise to users; a name that slips in because a private module grew
one is a promise made by accident. These sets are written out so that adding or removing a public
name is a visible change to this file, made on purpose.
"""

import importlib
import pkgutil

import pytest

import a2a_core

EXPECTED: dict[str, set[str]] = {
    "a2a_core": {
        "Agent",
        "AgentContext",
        "Artifact",
        "ArtifactChunk",
        "AuthenticationInfo",
        "CancelTaskRequest",
        "Core",
        "CoreConfig",
        "DeleteTaskPushNotificationConfigRequest",
        "ErrorMapping",
        "GetExtendedAgentCardRequest",
        "GetTaskPushNotificationConfigRequest",
        "GetTaskRequest",
        "InputError",
        "ListTaskPushNotificationConfigsRequest",
        "ListTaskPushNotificationConfigsResponse",
        "ListTasksRequest",
        "ListTasksResponse",
        "Message",
        "MissingInput",
        "Part",
        "Request",
        "Role",
        "RunAbandoned",
        "SendMessageConfiguration",
        "SendMessageRequest",
        "StateChange",
        "StreamEvent",
        "SubscribeToTaskRequest",
        "Task",
        "TaskArtifactUpdateEvent",
        "TaskPushNotificationConfig",
        "TaskState",
        "TaskStatus",
        "TaskStatusUpdateEvent",
        "Update",
        "agent_message",
        "auth_required",
        "completed",
        "exception_status",
        "failed",
        "input_required",
        "rejected",
        "reply",
        "text_artifact",
        "working",
    },
    "a2a_core.transport": {
        "ANONYMOUS",
        "Action",
        "Answer",
        "Caller",
        "Commit",
        "Frames",
        "HEALTH_PATHS",
        "Health",
        "HttpRequest",
        "HttpResponse",
        "KEEPALIVE",
        "Notify",
        "OutputTaken",
        "Outputs",
        "Probe",
        "Problem",
        "Read",
        "SSE_HEADERS",
        "Served",
        "Server",
        "StartRun",
        "StopRun",
        "StreamOpened",
        "Unwatch",
        "Watch",
        "V1Codec",
        "address_allowed",
        "ends_run",
        "sse_event",
        "url_problem",
    },
    "a2a_core.decisions": {
        "Rerun",
        "Advance",
        "AgentDone",
        "AgentOutput",
        "AwaitTask",
        "Binding",
        "Call",
        "CallReply",
        "Decision",
        "Dialect",
        "Dispatch",
        "Effect",
        "Fail",
        "FollowTask",
        "IllegalTransition",
        "Input",
        "Notify",
        "Operation",
        "Publish",
        "Push",
        "RUNS",
        "Respond",
        "RunEffect",
        "RunState",
        "RunTrigger",
        "StartRun",
        "StopRun",
        "StreamCursor",
        "StreamMode",
        "TRANSITIONS",
        "Tick",
        "Trigger",
        "World",
        "advance",
        "log_page",
        "normalize",
        "open_cursor",
        "release",
        "state_diagram",
        "transition",
        "view",
    },
    "a2a_core.store": {
        "ClosableStore",
        "EventBus",
        "InlineStore",
        "PingableStore",
        "SharedStore",
        "StoreMisconfigured",
        "StoreUnavailable",
        "OutboxQuery",
        "Pending",
        "Sent",
        "RunningQuery",
        "RECORD_FORMAT",
        "dump_event",
        "dump_record",
        "load_event",
        "load_record",
        "AsyncStore",
        "Cursor",
        "Delete",
        "Expired",
        "ExpiryQuery",
        "ListQuery",
        "LogQuery",
        "LoggedEvent",
        "MemoryTasks",
        "MessageKey",
        "Owner",
        "Page",
        "Put",
        "Reads",
        "Snapshot",
        "SyncStore",
        "TaskRecord",
        "Write",
        "message_fingerprint",
    },
    "a2a_core.card": {
        "APIKeySecurityScheme",
        "AgentCapabilities",
        "AgentCard",
        "AgentCardSignature",
        "AgentExtension",
        "AgentInterface",
        "AgentProvider",
        "AgentSkill",
        "AuthorizationCodeOAuthFlow",
        "ClientCredentialsOAuthFlow",
        "DeviceCodeOAuthFlow",
        "HTTPAuthSecurityScheme",
        "ImplicitOAuthFlow",
        "MutualTlsSecurityScheme",
        "OAuth2SecurityScheme",
        "OAuthFlow",
        "OpenIdConnectSecurityScheme",
        "PasswordOAuthFlow",
        "SecurityRequirement",
        "SecurityScheme",
        "canonical_card_bytes",
        "canonical_json",
    },
    "a2a_core.grpc": {
        "GRPC_CODES",
        "GRPC_CONTENT_TYPE",
        "GRPC_PREFIX",
        "PayloadCodec",
        "PayloadError",
        "frame",
        "grpc_code",
        "grpc_timeout",
        "percent_encode",
        "status_details",
        "unframe",
    },
    "a2a_core.errors": {
        "A2AError",
        "BusyError",
        "CompressionNotSupportedError",
        "ContentTypeNotSupportedError",
        "DeadlineExceededError",
        "ERROR_CODES",
        "ErrorCodes",
        "ExtendedAgentCardNotConfiguredError",
        "ExtensionSupportRequiredError",
        "FieldViolation",
        "InternalError",
        "InvalidAgentResponseError",
        "InvalidParamsError",
        "InvalidRequestError",
        "MethodNotFoundError",
        "ParseError",
        "PayloadTooLargeError",
        "PushNotificationNotSupportedError",
        "TaskNotCancelableError",
        "TaskNotFoundError",
        "UnauthenticatedError",
        "UnavailableError",
        "UnsupportedOperationError",
        "UsageError",
        "VersionNotSupportedError",
    },
}

#: Effects that are also actions of the machine: a transport performs them, a decider makes them.
SHARED = {"Notify", "StartRun", "StopRun"}


@pytest.mark.parametrize("namespace", sorted(EXPECTED))
def test_each_namespace_exports_what_it_means_to(namespace: str) -> None:
    module = importlib.import_module(namespace)
    assert set(module.__all__) == EXPECTED[namespace]
    assert len(module.__all__) == len(set(module.__all__))
    for name in module.__all__:
        assert getattr(module, name) is not None


def test_every_public_module_is_a_namespace_listed_here() -> None:
    public = {
        f"a2a_core.{info.name}"
        for info in pkgutil.iter_modules(a2a_core.__path__)
        if not info.name.startswith("_")
    }
    assert public - LAYERS == set(EXPECTED) - {"a2a_core"} | {"a2a_core.testing"}


#: The folders the core's modules live in, bottom up. A layer is not a namespace: it hands no
#: name on (its modules are private), and users reach what it holds through the faces above.
LAYERS = {f"a2a_core.{name}" for name in ("model", "wire", "decide", "front", "machine")}


@pytest.mark.parametrize("layer", sorted(LAYERS))
def test_a_layer_hands_no_name_on(layer: str) -> None:
    module = importlib.import_module(layer)
    assert module.__doc__
    assert not [name for name in vars(module) if not name.startswith("_")]


def test_a_name_lives_in_one_namespace_unless_it_is_an_effect_a_transport_performs() -> None:
    homes: dict[str, list[str]] = {}
    for namespace, names in EXPECTED.items():
        for name in names:
            homes.setdefault(name, []).append(namespace)
    shared = {name for name, where in homes.items() if len(where) > 1}
    assert shared == SHARED
    for name in SHARED:
        assert sorted(homes[name]) == ["a2a_core.decisions", "a2a_core.transport"]
        transport = importlib.import_module("a2a_core.transport")
        decisions = importlib.import_module("a2a_core.decisions")
        assert getattr(transport, name) is getattr(decisions, name)


def test_no_public_name_is_private_or_a_module() -> None:
    for namespace in EXPECTED:
        module = importlib.import_module(namespace)
        for name in module.__all__:
            assert not name.startswith("_")
            assert not hasattr(getattr(module, name), "__path__")
