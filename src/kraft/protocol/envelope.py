"""Typed envelopes: a Kafka API request or answer on its way between nodes, node parts and clients.

No bytes here: the network shell decodes a frame into an envelope and encodes the answer (by the
codec of its API), the simulator hands envelopes over as they are. Three kinds make one closed union,
``kraft.node.NodeEnvelope``, which ``Node.poll`` dispatches with ``match``:

* ``kraft.raft.messages.Envelope``: a raft RPC between quorum members, carrying the raft core's own
  dataclasses. It lives beside them in ``kraft.raft`` (this module is below the raft layer and must
  not import it), and is the hot path of the quorum.
* ``ControllerEnvelope``: a request to a node's *controller* side (what a controller listener
  serves: the controller APIs of brokers and admins, DescribeQuorum and the KIP-853 voter changes of
  admins, Metadata and DescribeCluster about the quorum) and its answer.
* ``ClientEnvelope``: a request a client sent to a *broker* listener, and its answer.

A request names its API by the schema (``api``: the ``kraft.protocol.messages`` module's ``API``),
never by a key written out by hand, and keeps the version it came in at: the answer is built for
that version. ``body`` is what the API's codec decodes to: the ``api.request`` struct for Kafka's
messages, the raft core's dataclass (``kraft.raft.messages``) for the raft APIs.

Ids: ``source``/``destination`` are node ids; a shell uses negative pseudo ids for a client
connection (one per connection, so that answers find their way back) and for bootstrap servers.
"""

from __future__ import annotations

from dataclasses import dataclass

from kraft.common.errors import KraftError
from kraft.common.principal import ANONYMOUS, KafkaPrincipal
from kraft.protocol.api import Api


class _NoResponse:
    """The answer to a request that gets none on the wire (Produce with acks=0)."""

    _instance: _NoResponse | None = None

    def __new__(cls) -> _NoResponse:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "NO_RESPONSE"


NO_RESPONSE = _NoResponse()
"""A node answers a request with this body when Kafka sends nothing back (acks=0): the network
shell writes no frame, and the client's next request is read as usual."""


@dataclass(frozen=True, slots=True)
class ApiRequest:
    """One request of ``api`` at ``version``; ``body`` is its decoded form (see the module docstring)."""

    api: Api
    version: int
    body: object

    def answer(self, body: object | None) -> ApiResponse:
        """The response to this request (``None``: no answer came, see ``ApiResponse``)."""
        return ApiResponse(self.api, self.version, body)


@dataclass(frozen=True, slots=True)
class ApiResponse:
    """The answer to a request of ``api`` at ``version``.

    ``body`` is None when no answer came: the shell could not deliver the request or its connection
    failed before the answer (the sender retries or gives up, as a Kafka client does).
    """

    api: Api
    version: int
    body: object | None


@dataclass(frozen=True, slots=True)
class ControllerEnvelope:
    """A request to a node's controller side, or its answer (see the module docstring)."""

    source: int
    destination: int
    correlation_id: int
    body: ApiRequest | ApiResponse
    # Who sent the request, as the listener authenticated it, and the client's IP address ("" when
    # not known: only host "*" ACLs match it). An answer keeps the request's.
    principal: KafkaPrincipal = ANONYMOUS
    host: str = ""
    # How long the sender waits for the answer (a forwarded request: what is left of its client's
    # timeout); None: the network's default. A shell must not give up, and the sender retry, a
    # request the controller may still be carrying out, sooner than this: a retried CreateTopics
    # would answer TOPIC_ALREADY_EXISTS for the topic its first attempt created.
    timeout_ms: int | None = None

    @property
    def is_request(self) -> bool:
        return type(self.body) is ApiRequest

    def reply(self, body: object | None) -> ControllerEnvelope:
        """The answer to this request, addressed back to its source with its correlation id."""
        return ControllerEnvelope(
            self.destination,
            self.source,
            self.correlation_id,
            _request(self).answer(body),
            self.principal,
            self.host,
        )


@dataclass(frozen=True, slots=True)
class ClientEnvelope:
    """A client's request on a broker listener (``listener`` names it: endpoints are reported for
    that listener only), or its answer."""

    source: int
    destination: int
    correlation_id: int
    listener: str
    body: ApiRequest | ApiResponse
    # Who sent the request, as the listener authenticated it, and the client's IP address ("" when
    # not known: only host "*" ACLs match it). An answer keeps the request's.
    principal: KafkaPrincipal = ANONYMOUS
    host: str = ""

    @property
    def is_request(self) -> bool:
        return type(self.body) is ApiRequest

    def reply(self, body: object | None) -> ClientEnvelope:
        """The answer to this request, addressed back to its source with its correlation id."""
        return ClientEnvelope(
            self.destination,
            self.source,
            self.correlation_id,
            self.listener,
            _request(self).answer(body),
            self.principal,
            self.host,
        )


def _request(envelope: ControllerEnvelope | ClientEnvelope) -> ApiRequest:
    body = envelope.body
    if type(body) is not ApiRequest:
        raise KraftError(f"only a request can be replied to, not {body!r}")
    return body
