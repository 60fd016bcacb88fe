"""CoreConfig checks its settings when it is made, with messages that name the setting."""

import re
from datetime import timedelta
from typing import Any

import pytest

from a2a_core import CoreConfig, ErrorMapping
from tests.a2a_core.support import CARD


def config(**options: Any) -> CoreConfig:
    return CoreConfig(card=CARD, **options)


def test_durations_may_be_seconds_or_timedeltas() -> None:
    assert config(task_ttl=90).task_ttl == timedelta(seconds=90)
    assert config(task_ttl=0.25).task_ttl == timedelta(milliseconds=250)
    assert config(task_ttl=timedelta(hours=1)).task_ttl == timedelta(hours=1)
    assert config().task_ttl is None
    assert config(direct_reply_window=0.2).direct_reply_window == timedelta(milliseconds=200)
    assert config(direct_reply_window=0).direct_reply_window == timedelta(0)
    assert config(direct_reply_window=None).direct_reply_window is None


def test_the_grpc_port_is_optional() -> None:
    assert config().grpc_port is None
    assert config(grpc_port=50051).grpc_port == 50051


def test_the_error_mapping_may_be_named_by_its_version() -> None:
    assert config(error_mapping="1.0.0").error_mapping is ErrorMapping.V1_0_0
    assert config(error_mapping=ErrorMapping.V1_0_1).error_mapping is ErrorMapping.V1_0_1


def test_push_allow_hosts_become_a_set_of_lower_case_names() -> None:
    assert config(push_allow_hosts=["LocalHost", "127.0.0.1"]).push_allow_hosts == frozenset(
        {"localhost", "127.0.0.1"}
    )


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"task_ttl": 1e-9}, ValueError, "task_ttl must be at least a microsecond"),
        ({"task_ttl": timedelta.max}, ValueError, "task_ttl must be at most a century"),
        ({"task_ttl": True}, TypeError, "task_ttl must be a number of seconds or a timedelta"),
        ({"error_mapping": "1.1"}, ValueError, "error_mapping must be one of '1.0.1', '1.0.0'"),
        ({"max_body_bytes": 0}, ValueError, "max_body_bytes must be at least 1, got 0"),
        ({"max_body_bytes": -1}, ValueError, "max_body_bytes must be at least 1, got -1"),
        ({"max_body_bytes": "8MB"}, TypeError, "max_body_bytes must be an int, got '8MB'"),
        ({"max_body_bytes": 1.5}, TypeError, "max_body_bytes must be an int, got 1.5"),
        ({"max_body_bytes": True}, TypeError, "max_body_bytes must be an int, got True"),
        ({"card_max_age": -1}, ValueError, "card_max_age must not be negative, got -1"),
        ({"card_max_age": "300"}, TypeError, "card_max_age must be an int"),
        ({"push_allow_hosts": "127.0.0.1"}, TypeError, "push_allow_hosts must be a collection"),
        ({"public_url": "agents.example:80"}, ValueError, "public_url must be an http:// or"),
        ({"public_url": "https://"}, ValueError, "public_url must be an http:// or"),
        ({"rpc_path": "rpc"}, ValueError, "rpc_path must start with '/', got 'rpc'"),
        ({"default_page_size": 101}, ValueError, "default_page_size (101) must not exceed"),
        ({"direct_reply_window": -1}, ValueError, "direct_reply_window must be positive"),
        ({"max_json_items": 0}, ValueError, "max_json_items must be at least 1, got 0"),
        ({"max_json_depth": 2.5}, TypeError, "max_json_depth must be an int, got 2.5"),
        ({"max_message_parts": -1}, ValueError, "max_message_parts must be at least 1"),
        ({"max_task_messages": 0}, ValueError, "max_task_messages must be at least 1, got 0"),
        ({"grpc_port": 0}, ValueError, "grpc_port must be a port from 1 to 65535, got 0"),
        ({"grpc_port": 65536}, ValueError, "grpc_port must be a port from 1 to 65535, got 65536"),
        ({"grpc_port": True}, ValueError, "grpc_port must be a port from 1 to 65535, got True"),
        ({"grpc_port": "50051"}, ValueError, "grpc_port must be a port from 1 to 65535, got '5"),
        (
            {"extended_card": "card.json"},
            TypeError,
            "extended_card must be an AgentCard, got 'card.json'",
        ),
    ],
)
def test_bad_settings_are_refused_by_name(
    options: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=f"^{re.escape(message)}"):
        config(**options)


def test_the_card_must_be_a_card() -> None:
    with pytest.raises(TypeError, match=r"^card must be an AgentCard"):
        CoreConfig(card={"name": "not a card"})  # type: ignore[arg-type]
