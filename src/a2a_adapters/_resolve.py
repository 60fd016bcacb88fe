"""From settings to the objects they name: cards, authenticators, the card signer, TLS files.

A setting may say where a thing is rather than give it (``card="examples.echo:card"``, a key
file to sign with, ``NAME=TOKEN`` pairs). Each is loaded and checked here, once, for ``serve()``,
``build_engine()`` and the command line alike; a mistake raises :class:`ValueError` (or
:class:`~a2a_adapters.MissingExtra`) that names the setting as it was given, through ``name``:
the field (``card``) from Python, the option typed or the variable read from the command line.
"""

import json
import ssl
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from a2a_core.card import AgentCard
from a2a_core.errors import A2AError
from a2a_core.transport import V1Codec

from ._agents import load_object
from ._auth import ApiKeys, Authenticator, BearerTokens
from ._extras import MissingExtra
from ._tls import TlsFiles
from .settings import Settings

__all__ = [
    "Namer",
    "authenticators",
    "card_signer",
    "cards",
    "load_card",
    "load_named",
    "tls_files",
]

#: How a setting is called where it was given, by its field's name.
Namer = Callable[[str], str]


def _field(name: str) -> str:
    return name


def _refuse(message: str) -> NoReturn:
    raise ValueError(message) from None


def load_named(spec: str, said: str) -> object:
    """The object ``MODULE:OBJECT`` names; ``said`` is how the setting is called."""
    try:
        return load_object(spec)
    except ModuleNotFoundError as error:
        _refuse(f"{said} {spec}: no module named {error.name!r}")
    except (AttributeError, ValueError, ImportError) as error:
        _refuse(f"{said} {spec}: {error}")


def load_card(spec: AgentCard | str, said: str) -> AgentCard:
    """The card ``spec`` is or names: ``MODULE:OBJECT``, or a JSON file in v1.0 card format."""
    if isinstance(spec, AgentCard):
        return spec
    path = Path(spec)
    if path.suffix == ".json":
        try:
            card: AgentCard = V1Codec().decode(AgentCard, json.loads(path.read_text()), "card")
        except OSError as error:
            _refuse(f"{said} {spec}: {error.strerror}")
        except ValueError as error:
            _refuse(f"{said} {spec}: not JSON ({error})")
        except A2AError as error:
            _refuse(f"{said} {spec}: not a v1.0 agent card ({error.message})")
        return card
    loaded = load_named(spec, said)
    if not isinstance(loaded, AgentCard):
        _refuse(f"{said} {spec}: expected an AgentCard, got {type(loaded).__name__}")
    return loaded


def _pairs(values: Sequence[str]) -> dict[str, str]:
    """``NAME=SECRET`` settings (checked already) as a secret -> name mapping."""
    return {secret: name for name, _, secret in (value.partition("=") for value in values)}


def authenticators(settings: Settings, name: Namer = _field) -> tuple[Authenticator, ...]:
    """The authenticators the settings make, after those given as objects (``auth``)."""
    found: list[Authenticator] = list(settings.auth)
    if settings.auth_tokens:
        found.append(BearerTokens(_pairs(settings.auth_tokens)))
    if settings.api_keys:
        found.append(ApiKeys(_pairs(settings.api_keys)))
    if settings.jwt_issuer is not None:
        said = f"{name('jwt_issuer')} {settings.jwt_issuer}"
        try:
            from .oidc import JwtBearer
        except MissingExtra as missing:
            raise MissingExtra(f"{said}: {missing}", name=missing.name) from None
        try:
            found.append(
                JwtBearer(
                    settings.jwt_issuer,
                    settings.jwt_audiences,
                    jwks_url=settings.jwt_jwks_url,
                    claim=settings.jwt_claim,
                    leeway=settings.jwt_leeway,
                )
            )
        except ValueError as error:
            _refuse(f"{said}: {error}")
    return tuple(found)


def card_signer(settings: Settings, name: Namer = _field) -> Any:
    """What signs the cards: ``card_signer``, or a signer of the key file ``sign_card``."""
    if settings.sign_card is None:
        return settings.card_signer
    said = f"{name('sign_card')} {settings.sign_card}"
    try:
        from .signing import CardSigner
    except MissingExtra as missing:
        raise MissingExtra(f"{said}: {missing}", name=missing.name) from None
    try:
        return CardSigner.from_file(
            settings.sign_card, kid=settings.sign_card_kid, jku=settings.sign_card_jku
        )
    except ValueError as error:
        _refuse(f"{name('sign_card')}: {error}")  # the error names the file


def tls_files(settings: Settings, name: Namer = _field) -> TlsFiles | None:
    """The TLS files, checked now: each can be read, and they load together."""
    certfile, keyfile = settings.certfile, settings.keyfile
    if certfile is None or keyfile is None:
        return None  # both or neither: check_together said so
    cert, key = f"{name('certfile')} {certfile}", f"{name('keyfile')} {keyfile}"
    for said, path in ((cert, certfile), (key, keyfile)):
        try:  # ssl's own error would not say which file it could not read
            with open(path, "rb"):
                pass
        except OSError as error:
            _refuse(f"{said}: {error.strerror}")
    try:
        ssl.create_default_context(ssl.Purpose.CLIENT_AUTH).load_cert_chain(certfile, keyfile)
    except (OSError, ssl.SSLError) as error:
        _refuse(f"{cert} with {key}: cannot serve TLS with them ({error})")
    return TlsFiles(certfile, keyfile)


def cards(settings: Settings, name: Namer = _field) -> tuple[AgentCard | None, AgentCard | None]:
    """The card and the extended card the settings give or name (``None`` where they give
    none)."""
    card = settings.card
    extended = settings.extended_card
    return (
        load_card(card, name("card")) if card is not None else None,
        load_card(extended, name("extended_card")) if extended is not None else None,
    )
