"""Hostile push notification configs, on both loops: what is accepted can be delivered, and
what cannot be delivered (or would cost every notification a megabyte) is refused when the
config is made, -32602 naming the field.

Each row is a config's fields and its fate: refused, naming a field; or delivered to a real
webhook receiver on 127.0.0.1, with an ``X-A2A-Notification-Id`` that any HTTP client can send
and that decodes back to the ids (a client may choose ids HTTP cannot carry as they are).
"""

from collections.abc import AsyncIterator, Iterator
from typing import Any
from urllib.parse import unquote

import attrs
import pytest

from a2a_core import AgentContext, Update, completed
from tests import servers
from tests.a2a_adapters.hostile.support import quiet_log
from tests.a2a_adapters.support import new_id, rpc, send_params, wait_until
from tests.a2a_adapters.webhooks import Receiver, receiving

pytestmark = pytest.mark.usefixtures("module_adapter")

LIMIT = 4096  # max_push_field_bytes, the default


async def agent(ctx: AgentContext) -> AsyncIterator[Update]:
    yield completed("done")


@pytest.fixture(scope="module")
def receiver() -> Iterator[Receiver]:
    with receiving() as running:
        yield running


@pytest.fixture(scope="module")
def url(module_adapter: servers.Adapter) -> Iterator[str]:
    with servers.running_server(agent, push=True, push_allow_hosts=["127.0.0.1"]) as running:
        yield running


@attrs.frozen
class Config:
    name: str
    #: The config's fields, less ``url`` when it goes to the receiver (``url`` given: as is).
    fields: dict[str, Any]
    #: The field the refusal names (``""``: accepted and delivered).
    refused: str = ""


def auth(scheme: str, credentials: str = "") -> dict[str, Any]:
    return {"authentication": {"scheme": scheme, "credentials": credentials}}


CONFIGS = [
    # Ids a client chooses: any string is an id; HTTP carries it percent-encoded.
    Config("an id with é", {"id": "é"}),
    Config("an id with a byte-order mark", {"id": "\ufeff"}),
    Config("an id with a right-to-left override", {"id": "a\u202eb"}),
    Config("an id of U+FFFF", {"id": "\uffff"}),
    Config("an id with CR LF", {"id": "a\r\nX-Injected: 1"}),
    Config("an id with a slash and a percent", {"id": "a/b%2F"}),
    Config("an id of 4 KiB", {"id": "i" * LIMIT}),
    Config("an id over 4 KiB", {"id": "i" * (LIMIT + 1)}, "id"),
    Config("an id of 4 KiB in two-byte characters", {"id": "é" * (LIMIT // 2 + 1)}, "id"),
    # Sizes: each field bounded.
    Config("a token of 1 MiB", {"token": "t" * 2**20}, "token"),
    Config("credentials of 1 MiB", auth("Bearer", "c" * 2**20), "authentication.credentials"),
    Config("a scheme of 8 KiB", auth("B" * 8192, "c"), "authentication.scheme"),
    Config(
        "a URL of 8 KiB",
        {"url": "http://127.0.0.1:9/" + "p" * 8192},
        "url",
    ),
    Config("a token of 4 KiB", {"token": "t" * LIMIT}),
    # What a header cannot carry.
    Config("a token with LF", {"token": "a\nX-Injected: 1"}, "token"),
    Config("a token with NUL", {"token": "a\x00b"}, "token"),
    Config("a token with é", {"token": "é"}, "token"),
    Config("a token with a leading space", {"token": " a"}, "token"),
    Config("credentials with CR", auth("Bearer", "a\rb"), "authentication.credentials"),
    Config("a scheme with a space", auth("Bearer x", "c"), "authentication.scheme"),
    Config("an empty scheme", auth("", "c"), "authentication.scheme"),
    # Webhooks the SSRF guard refuses as written (the address connected to is checked too).
    Config("a private address", {"url": "http://10.0.0.1/h"}, "url"),
    Config("the cloud metadata address", {"url": "http://169.254.169.254/latest"}, "url"),
    Config("IPv6 loopback", {"url": "http://[::1]/h"}, "url"),
    Config("IPv4-mapped loopback", {"url": "http://[::ffff:127.0.0.1]/h"}, "url"),
    Config("the unspecified address", {"url": "http://0.0.0.0/h"}, "url"),
    Config("a file URL", {"url": "file:///etc/passwd"}, "url"),
    Config("a gopher URL", {"url": "gopher://example.com/"}, "url"),
    Config("credentials in the URL", {"url": "http://user:pw@example.com/h"}, "url"),
    Config("a URL with a space", {"url": "http://example.com/a b"}, "url"),
    Config("a URL with CR LF", {"url": "http://example.com/\r\nX: 1"}, "url"),
    Config("a URL with é", {"url": "http://exämple.com/h"}, "url"),
    Config("no URL", {"url": ""}, "url"),
]


def send_with(url: str, receiver: Receiver, config: Config, path: str) -> Any:
    """A blocking send whose task carries the config from its first event."""
    params = send_params("hi")
    inline = {"url": receiver.url + path, **config.fields}
    params["configuration"] = {"taskPushNotificationConfig": inline}
    return rpc(url, "SendMessage", params).json()


FIELD = "params.configuration.taskPushNotificationConfig"


@pytest.mark.parametrize("config", CONFIGS, ids=lambda config: config.name)
def test_a_push_config_is_refused_naming_its_field_or_delivered(
    url: str, receiver: Receiver, config: Config, caplog: pytest.LogCaptureFixture
) -> None:
    path = f"/{new_id()}"
    with quiet_log(caplog):
        answer = send_with(url, receiver, config, path)
        if config.refused:
            error = answer["error"]
            assert error["code"] == -32602, error
            assert error["message"].startswith(f"Invalid parameters: {FIELD}.{config.refused}:")
            return
        task_id = answer["result"]["task"]["id"]
        # Submitted, working (or not), completed: at least two events reach the webhook.
        assert wait_until(lambda: len(receiver.deliveries(path)) >= 2), receiver.deliveries(path)
    for delivery in receiver.deliveries(path):
        header = delivery.headers["x-a2a-notification-id"]
        assert all("!" <= char <= "~" for char in header), header
        task, config_id, seq = (unquote(part) for part in header.split("/"))
        assert task == task_id
        assert config_id == config.fields.get("id", config_id)
        assert config_id
        assert seq.isdigit()


@pytest.mark.parametrize("task_id", ["tâche", "a\u202eb", "\ufeffx", "a/b"])
def test_a_task_id_the_client_chose_reaches_the_webhook_encoded(
    url: str, receiver: Receiver, task_id: str, caplog: pytest.LogCaptureFixture
) -> None:
    """The legacy ``tasks/send`` lets a client name its task: any string, which HTTP carries
    in the notification's id percent-encoded."""
    path = f"/{new_id()}"
    chosen = f"{task_id}-{new_id()}"
    params = {
        "id": chosen,
        "message": {"role": "user", "parts": [{"type": "text", "text": "hi"}]},
        "pushNotification": {"url": receiver.url + path},
    }
    with quiet_log(caplog):
        answer = rpc(url, "tasks/send", params, headers={}).json()
        assert answer["result"]["id"] == chosen
        assert wait_until(lambda: len(receiver.deliveries(path)) >= 2), receiver.deliveries(path)
    for delivery in receiver.deliveries(path):
        task, _, _ = (
            unquote(part) for part in delivery.headers["x-a2a-notification-id"].split("/")
        )
        assert task == chosen
