"""The card as served: the interfaces it advertises are exactly the bindings and dialects on."""

from typing import Any

import pytest

from a2a_core import CoreConfig
from a2a_core.decide._card import CardRenderer
from a2a_core.transport import V1Codec
from tests.a2a_core.support import CARD


def interfaces(**options: Any) -> list[tuple[str, str, str]]:
    card = CardRenderer(CoreConfig(card=CARD, **options), V1Codec()).card("http://host:8000/")
    return [(i.protocol_binding, i.protocol_version, i.url) for i in card.supported_interfaces]


@pytest.mark.parametrize(
    ("options", "advertised"),
    [
        (
            {},
            [
                ("JSONRPC", "1.0", "http://host:8000/"),
                ("HTTP+JSON", "1.0", "http://host:8000"),
                ("JSONRPC", "0.3", "http://host:8000/"),
            ],
        ),
        (
            {"v03": False, "rest": False, "rpc_path": "/rpc"},
            [("JSONRPC", "1.0", "http://host:8000/rpc")],
        ),
        (
            {"v03": False, "grpc_port": 50051},
            [
                ("JSONRPC", "1.0", "http://host:8000/"),
                ("HTTP+JSON", "1.0", "http://host:8000"),
                ("GRPC", "1.0", "host:50051"),
            ],
        ),
    ],
    ids=["default", "v1-json-rpc-only", "grpc"],
)
def test_the_card_advertises_each_binding_and_dialect_served(
    options: dict[str, Any], advertised: list[tuple[str, str, str]]
) -> None:
    assert interfaces(**options) == advertised
