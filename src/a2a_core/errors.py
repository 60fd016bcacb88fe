"""The protocol's errors, each carrying its codes on every binding (:data:`ERROR_CODES`).

Raise one from an agent or a store to answer that error in the caller's binding and dialect;
:class:`UsageError` instead means the core was called wrongly (a bug in its caller).
"""

from ._errors import (
    ERROR_CODES,
    A2AError,
    BusyError,
    ContentTypeNotSupportedError,
    ErrorCodes,
    ExtendedAgentCardNotConfiguredError,
    ExtensionSupportRequiredError,
    FieldViolation,
    InternalError,
    InvalidAgentResponseError,
    InvalidParamsError,
    InvalidRequestError,
    MethodNotFoundError,
    ParseError,
    PayloadTooLargeError,
    PushNotificationNotSupportedError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnauthenticatedError,
    UnavailableError,
    UnsupportedOperationError,
    UsageError,
    VersionNotSupportedError,
)

__all__ = [
    "ERROR_CODES",
    "A2AError",
    "BusyError",
    "ContentTypeNotSupportedError",
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
]
