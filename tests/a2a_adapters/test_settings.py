"""``Settings``: each setting defined once, and the command line, the environment, ``serve()``
and ``build_engine()`` all made from it."""

import re
from datetime import timedelta
from typing import Any

import attrs
import pytest

from a2a_adapters import BearerTokens, PushSender, build_engine, serve
from a2a_adapters._setting import Choice, Many, Number, Switch, options
from a2a_adapters.cli import _asked, help_text
from a2a_adapters.settings import (
    ENGINE_BASELINE,
    GROUPS,
    Settings,
    check_together,
    settings_from_environment,
)
from examples import echo

FIELDS = list(options(Settings))


def test_every_setting_has_a_group_help_and_names_of_its_own() -> None:
    flags: list[str] = []
    for field, option in FIELDS:
        assert option.group in GROUPS, field.name
        assert option.help, field.name
        assert not option.help.endswith("."), field.name
        if option.flag is not None:
            flags += [option.flag, *option.aliases]
            assert option.environment == "A2A_" + option.flag[2:].upper().replace("-", "_")
    assert len(flags) == len(set(flags))
    assert [option.group for _, option in FIELDS] == sorted(
        (option.group for _, option in FIELDS), key=GROUPS.index
    ), "the fields are in the order of their groups, as --help shows them"


def test_every_default_passes_its_own_check() -> None:
    defaults = Settings()
    for field, _ in FIELDS:
        same: dict[str, Any] = {field.name: field.default}
        assert attrs.evolve(defaults, **same) == defaults


@pytest.mark.parametrize(("field", "option"), [f for f in FIELDS if f[1].flag is not None])
def test_an_options_text_means_what_the_same_value_means_in_python(field: Any, option: Any) -> None:
    """For each option, a typical value written on the command line gives the setting Python
    code would give it."""
    kind = option.kind
    if option.switch is not None:
        argv, expected = [option.flag], option.switch
    elif isinstance(kind, Choice):
        argv, expected = [option.flag, kind.choices[-1]], kind.choices[-1]
    elif isinstance(kind, Many):
        value = _typical(field.name)
        argv = [option.flag, value]
        expected = tuple(kind.split(value)) if kind.commas else (value,)
    elif isinstance(kind, Number):
        number = 1234 if kind.accept(1234) else 2
        argv, expected = [option.flag, str(number)], kind.kind(number)
    else:
        value = _typical(field.name)
        argv, expected = [option.flag, value], value
    asked = _asked(["serve", "examples.echo:agent", *argv], {})
    assert getattr(asked.settings, field.name) == expected
    assert asked.names[field.name] == option.flag


def _typical(name: str) -> str:
    return {
        "auth_tokens": "alice=s3cret",
        "api_keys": "bob=k3y",
        "forwarded_allow_ips": "10.0.0.0/8,127.0.0.1",
        "cors_origins": "https://app.example",
        "public_url": "https://agents.example",
        "root_path": "/agents",
        "store": "sqlite:elsewhere.db",
    }.get(name, "value")


def test_the_environment_is_read_by_the_same_rules_and_the_command_line_wins() -> None:
    env = {
        "A2A_PORT": "8080",
        "A2A_NO_PUSH": "yes",
        "A2A_NO_STREAMING": "false",
        "A2A_PUSH_ALLOW_HOST": "127.0.0.1, ::1",
        "A2A_TASK_TTL": "60",
        "A2A_LOG_LEVEL": "debug",
    }
    found = settings_from_environment(env)
    assert found["port"] == ("A2A_PORT", 8080)
    assert found["push"] == ("A2A_NO_PUSH", False)
    assert found["streaming"] == ("A2A_NO_STREAMING", True)
    assert found["push_allow_hosts"] == ("A2A_PUSH_ALLOW_HOST", ["127.0.0.1", "::1"])
    asked = _asked(["serve", "examples.echo:agent", "--port", "9000"], env)
    assert asked.settings.port == 9000
    assert asked.names["port"] == "--port"
    assert asked.settings.task_ttl == 60.0
    assert asked.names["task_ttl"] == "A2A_TASK_TTL"
    assert asked.settings.push is False
    assert asked.settings.push_allow_hosts == ("127.0.0.1", "::1")


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"A2A_PORT": "abc"}, "A2A_PORT: 'abc' is not a port number"),
        ({"A2A_NO_PUSH": "maybe"}, "A2A_NO_PUSH: expected true or false, got 'maybe'"),
        ({"A2A_LOOP": "uvloop"}, "A2A_LOOP: 'uvloop' is not one of asyncio, trio"),
        ({"A2A_AUTH_TOKEN": "s3cret"}, "A2A_AUTH_TOKEN: expected NAME=SECRET"),
        ({"A2A_MAX_RUNS": "0"}, "A2A_MAX_RUNS: 0 is not a positive number"),
    ],
)
def test_a_wrong_variable_is_named(env: dict[str, str], message: str) -> None:
    with pytest.raises(ValueError, match=f"^{re.escape(message)}"):
        settings_from_environment(env)


@pytest.mark.parametrize(
    ("changes", "error", "message"),
    [
        ({"port": 70000}, ValueError, "port must be from 0 to 65535 (0: any free port), got 70000"),
        ({"port": True}, TypeError, "port must be an int, got True"),
        ({"workers": 0}, ValueError, "workers must be from 1 to 256, got 0"),
        ({"streaming": "yes"}, TypeError, "streaming must be True or False, got 'yes'"),
        ({"push": "on"}, TypeError, "push must be True or False, got 'on'"),
        ({"log_level": "loud"}, ValueError, "log_level must be one of 'critical', 'error'"),
        ({"header_timeout": 0}, ValueError, "header_timeout must be a positive number of seconds"),
        ({"max_connections": 0}, ValueError, "max_connections must be a positive number, got 0"),
        ({"shutdown_grace": -1}, ValueError, "shutdown_grace must be a finite number of seconds"),
        ({"jwt_leeway": "30"}, TypeError, "jwt_leeway must be a number of seconds or a timedelta"),
        ({"auth_tokens": "alice=s3cret"}, TypeError, "auth_tokens must be a list of NAME=TOKEN"),
        ({"auth_tokens": ["s3cret"]}, ValueError, "auth_tokens: expected NAME=SECRET"),
        ({"root_path": "agents"}, ValueError, "root_path must be a path such as /agents"),
        ({"forwarded_allow_ips": ["proxy"]}, ValueError, "forwarded_allow_ips must be an IP"),
        ({"store": 5}, TypeError, "store must be a task store or a store URL, got 5"),
        ({"card_signer": "key.pem"}, TypeError, "card_signer must be a card signer"),
    ],
)
def test_a_wrong_value_is_refused_naming_the_setting(
    changes: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=f"^{re.escape(message)}") as refused:
        Settings(**changes)
    assert "s3cret" not in str(refused.value)


def test_values_are_kept_as_given_or_made_plain() -> None:
    settings = Settings(
        push_allow_hosts=["a.example"],
        task_ttl=timedelta(minutes=1),
        jwt_leeway=timedelta(seconds=5),  # type: ignore[arg-type]  # as seconds, too
        auth=[BearerTokens({"t": "alice"})],
        push=PushSender(),
    )
    assert settings.push_allow_hosts == ("a.example",)
    assert settings.task_ttl == timedelta(minutes=1)  # the core's to convert
    assert settings.jwt_leeway == 5.0
    assert isinstance(settings.auth, tuple)
    assert isinstance(settings.push, PushSender)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"certfile": "c.pem"}, "certfile c.pem needs keyfile: the certificate's private key"),
        ({"keyfile": "k.pem"}, "keyfile k.pem needs certfile: the certificate it is the key of"),
        ({"jwt_issuer": "https://i.example"}, "jwt_issuer https://i.example needs jwt_audiences"),
        ({"jwt_audiences": ["x"]}, "jwt_audiences and jwt_jwks_url go with jwt_issuer URL"),
        ({"sign_card_kid": "k1"}, "sign_card_kid and sign_card_jku go with sign_card KEY_FILE"),
        ({"extended_card": echo.card}, "an extended card is served to authenticated callers"),
        ({"grpc_port": 9999}, "grpc_port 9999 is the HTTP port (port): on asyncio gRPC needs"),
    ],
)
def test_what_settings_decide_together_is_checked_in_their_python_names(
    changes: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError, match=f"^{re.escape(message)}"):
        check_together(Settings(**changes))


def test_build_engine_starts_from_its_baseline_and_takes_a_settings_object() -> None:
    engine = build_engine(echo.agent)
    config = engine.core.config
    assert (config.streaming, config.push_notifications, config.max_runs) == (False, False, None)
    assert ENGINE_BASELINE["store"] == "memory"
    settings = Settings(store="memory", max_runs=7)
    engine = build_engine(echo.agent, settings, streaming=False)
    assert engine.core.config.max_runs == 7
    assert engine.core.config.streaming is False
    assert engine.core.config.push_notifications is True  # Settings' own default


@pytest.mark.parametrize("name", ["port", "host", "loop", "log_level", "root_path", "workers"])
def test_build_engine_refuses_what_only_a_server_does(name: str) -> None:
    value = getattr(Settings(), name)
    with pytest.raises(TypeError, match=f"^{name} is a setting of serve"):
        build_engine(echo.agent, **{name: value})


def test_unknown_settings_are_refused_with_the_nearest_name() -> None:
    with pytest.raises(TypeError, match=r"^'streamng' is not a setting of build_engine\(\) "):
        build_engine(echo.agent, streamng=True)
    with pytest.raises(TypeError, match=r"did you mean 'max_runs'\?"):
        serve(echo.agent, max_run=3)
    with pytest.raises(TypeError, match="settings must be a Settings, got dict"):
        serve(echo.agent, {"port": 0})  # type: ignore[arg-type]


def test_serve_serves_from_one_process() -> None:
    with pytest.raises(ValueError, match=r"^workers=2: serve\(\) serves from one process"):
        serve(echo.agent, workers=2)


def test_the_help_says_each_default_once() -> None:
    by_name = {field.name: (field, option) for field, option in FIELDS}
    assert help_text(*by_name["max_runs"]).endswith("(default: 10,000)")
    assert help_text(*by_name["max_body_bytes"]).endswith("(default: 8 MiB)")
    assert "default" not in help_text(*by_name["streaming"])  # a switch: off is the default
    assert help_text(*by_name["task_ttl"]).count("default") == 1  # said in its own words


def test_switches_read_from_text_like_the_environment_says() -> None:
    for text in ("1", "true", "YES", " on "):
        assert Switch().read(text) is True
    for text in ("0", "false", "no", "off", ""):
        assert Switch().read(text) is False
