"""The Agent Card: how an agent describes itself, its endpoints, skills and security.

Shaped like the v1.0 proto. ``oneof`` wrappers on the wire (``SecurityScheme``, ``OAuthFlows``)
are plain unions here; the codec adds and removes the wrapper key.
"""

from collections.abc import Mapping

import attrs

from ._task import ALWAYS, Metadata

__all__ = [
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
]


@attrs.frozen
class AgentInterface:
    """One endpoint: where it is, which binding it speaks, and which protocol version."""

    url: str
    protocol_binding: str
    protocol_version: str
    tenant: str = ""


@attrs.frozen
class AgentProvider:
    """Who runs the agent."""

    url: str
    organization: str


@attrs.frozen
class AgentExtension:
    """A protocol extension the agent supports (and whether clients must support it)."""

    uri: str = ""
    description: str = ""
    required: bool = False
    params: Metadata | None = None


@attrs.frozen
class AgentCapabilities:
    """Optional features. ``None`` means "not declared", which is not the same as ``False``."""

    streaming: bool | None = None
    push_notifications: bool | None = None
    extensions: tuple[AgentExtension, ...] = ()
    extended_agent_card: bool | None = None


@attrs.frozen
class SecurityRequirement:
    """One alternative of the requirements: every named scheme (with its scopes) must hold."""

    schemes: Mapping[str, tuple[str, ...]] = attrs.field(factory=dict)


@attrs.frozen
class AgentSkill:
    """Something the agent can do; a send may name it to be routed to its agent."""

    id: str
    name: str
    description: str
    tags: tuple[str, ...]
    examples: tuple[str, ...] = ()
    input_modes: tuple[str, ...] = ()
    output_modes: tuple[str, ...] = ()
    security_requirements: tuple[SecurityRequirement, ...] = ()


@attrs.frozen
class AgentCardSignature:
    """A JWS signature over the canonical card."""

    protected: str
    signature: str
    header: Metadata | None = None


@attrs.frozen
class APIKeySecurityScheme:
    """An API key in a header, query parameter or cookie."""

    location: str
    name: str
    description: str = ""


@attrs.frozen
class HTTPAuthSecurityScheme:
    """HTTP authentication such as ``Bearer`` or ``Basic``."""

    scheme: str
    description: str = ""
    bearer_format: str = ""


@attrs.frozen
class AuthorizationCodeOAuthFlow:
    """OAuth 2 authorization code flow."""

    authorization_url: str
    token_url: str
    scopes: Mapping[str, str]
    refresh_url: str = ""
    pkce_required: bool = False


@attrs.frozen
class ClientCredentialsOAuthFlow:
    """OAuth 2 client credentials flow."""

    token_url: str
    scopes: Mapping[str, str]
    refresh_url: str = ""


@attrs.frozen
class DeviceCodeOAuthFlow:
    """OAuth 2 device authorization flow."""

    device_authorization_url: str
    token_url: str
    scopes: Mapping[str, str]
    refresh_url: str = ""


@attrs.frozen
class ImplicitOAuthFlow:
    """OAuth 2 implicit flow (deprecated in v1.0, kept for old cards)."""

    authorization_url: str = ""
    refresh_url: str = ""
    scopes: Mapping[str, str] = attrs.field(factory=dict)


@attrs.frozen
class PasswordOAuthFlow:
    """OAuth 2 password flow (deprecated in v1.0, kept for old cards)."""

    token_url: str = ""
    refresh_url: str = ""
    scopes: Mapping[str, str] = attrs.field(factory=dict)


OAuthFlow = (
    AuthorizationCodeOAuthFlow
    | ClientCredentialsOAuthFlow
    | DeviceCodeOAuthFlow
    | ImplicitOAuthFlow
    | PasswordOAuthFlow
)


@attrs.frozen
class OAuth2SecurityScheme:
    """OAuth 2 with one flow."""

    flows: OAuthFlow
    description: str = ""
    oauth2_metadata_url: str = ""


@attrs.frozen
class OpenIdConnectSecurityScheme:
    """OpenID Connect discovery."""

    open_id_connect_url: str
    description: str = ""


@attrs.frozen
class MutualTlsSecurityScheme:
    """Client certificates."""

    description: str = ""


SecurityScheme = (
    APIKeySecurityScheme
    | HTTPAuthSecurityScheme
    | OAuth2SecurityScheme
    | OpenIdConnectSecurityScheme
    | MutualTlsSecurityScheme
)


@attrs.frozen
class AgentCard:
    """The self-description served at ``/.well-known/agent-card.json``."""

    name: str
    description: str
    version: str
    supported_interfaces: tuple[AgentInterface, ...] = attrs.field(default=(), metadata=ALWAYS)
    capabilities: AgentCapabilities = attrs.field(default=AgentCapabilities(), metadata=ALWAYS)
    default_input_modes: tuple[str, ...] = attrs.field(default=("text/plain",), metadata=ALWAYS)
    default_output_modes: tuple[str, ...] = attrs.field(default=("text/plain",), metadata=ALWAYS)
    skills: tuple[AgentSkill, ...] = attrs.field(default=(), metadata=ALWAYS)
    provider: AgentProvider | None = None
    documentation_url: str | None = None
    security_schemes: Mapping[str, SecurityScheme] = attrs.field(factory=dict)
    security_requirements: tuple[SecurityRequirement, ...] = ()
    signatures: tuple[AgentCardSignature, ...] = ()
    icon_url: str | None = None

    def skill(self, skill_id: str) -> AgentSkill | None:
        """The skill with this id, if the card lists it."""
        return next((s for s in self.skills if s.id == skill_id), None)
