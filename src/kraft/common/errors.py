"""The exception hierarchy.

Protocol outcomes ("not leader", "fenced epoch") are error codes placed in responses, never
exceptions. Exceptions are for three things (h11's local/remote split):

* ``KraftError`` subclasses: our own caller misused an API (``NotLeaderError`` from an append on a
  non-leader, a bad config value).
* ``RemoteProtocolError``: bytes from a peer could not be decoded. Raised only at the decode
  boundary, where it becomes an error response or a closed connection.
* ``FatalError``: a broken invariant or failed storage. The node stops; never catch and carry on.
"""

from __future__ import annotations


class KraftError(Exception):
    """Base of every error kraft raises on purpose."""


class ConfigError(KraftError):
    """A configuration value is missing or invalid; the message names the property."""


class NotLeaderError(KraftError):
    """An append or resign was asked of a node that is not the leader of that epoch."""


class RemoteProtocolError(KraftError):
    """Bytes received from a peer are not a valid Kafka message."""


class MalformedMessageError(RemoteProtocolError):
    """A frame or message body is truncated, over-long or otherwise undecodable."""


class UnsupportedApiError(RemoteProtocolError):
    """The request names an API key or version this node does not speak."""

    def __init__(
        self, message: str, *, api_key: int, api_version: int, correlation_id: int | None = None
    ) -> None:
        super().__init__(message)
        self.api_key = api_key
        self.api_version = api_version
        # Set when the request header was readable, so the server can still answer the request.
        self.correlation_id = correlation_id


class FrameTooLargeError(RemoteProtocolError):
    """A frame's size prefix is negative or above the configured maximum."""


class CorruptRecordError(KraftError):
    """A record batch failed its CRC or structural checks."""


class StorageError(KraftError):
    """A log directory, segment, snapshot or state file cannot be used as it is."""


class FatalError(KraftError):
    """A broken invariant or failed durable write: the node must stop."""
