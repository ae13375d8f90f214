"""The simulated network: per-link delays, loss, duplication, reordering and partitions.

Owns only the *policy* for messages in flight; the world (``kraft.sim.world``) owns the event queue
and asks ``route`` what to do with each outbound envelope. Every random choice is drawn from the
world's single seeded ``random.Random`` in a fixed order, so a run replays from its seed.

Model:
* A message departs at ``depart_ms`` (the world delays departure by the sender's disk time) and
  arrives ``delay`` ms later, the delay drawn per message from the link's range: two messages on
  one link may overtake each other (reordering).
* A blocked directed link (``a -> b``) drops a message both when it is sent and when it would
  arrive, so a partition that starts while a message is in flight still cuts it. Symmetric
  partitions block both directions; one-way partitions block one.
* Loss and duplication are independent per message; a duplicate gets its own delay. A lost
  message is dropped without a trace (a datagram), or, on a link with ``retransmit_ms`` (TCP),
  delivered late: a segment lost on a live connection is sent again after the retransmission
  timeout, doubled for each further loss, and the receiver sees the message late, never not at
  all. Real clients meet the second kind; the first tests the protocol's own retries.
* An unreachable advertised endpoint (``block_endpoint``) refuses connections by default (the
  world answers the sender's request with an error, see ``kraft.sim.world``), or swallows them.
* Invariant: nothing here reads a clock or iterates a set; the same calls give the same answers.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(slots=True)
class LinkProfile:
    """Delivery characteristics of one directed link (or the default for all links)."""

    min_delay_ms: int = 2
    max_delay_ms: int = 7
    loss: float = 0.0
    duplicate: float = 0.0
    # 0: a lost message is gone. > 0: lost messages are resent after this many ms (Linux's
    # minimum TCP retransmission timeout is 200 ms), doubled per further loss of the same message.
    retransmit_ms: int = 0

    def validate(self) -> None:
        # At least 1 ms: a zero delay would let two nodes ping-pong forever at one instant.
        if not 1 <= self.min_delay_ms <= self.max_delay_ms:
            raise ValueError(f"bad delay range [{self.min_delay_ms}, {self.max_delay_ms}] (min must be >= 1)")
        if not (0.0 <= self.loss <= 1.0 and 0.0 <= self.duplicate <= 1.0):
            raise ValueError(f"loss {self.loss} and duplicate {self.duplicate} must be within [0, 1]")
        if self.retransmit_ms < 0 or (self.retransmit_ms and self.loss >= 1.0):
            raise ValueError(f"retransmit_ms {self.retransmit_ms} must be >= 0, and loss below 1 to use it")


@dataclass(slots=True)
class NetworkStats:
    sent: int = 0
    delivered: int = 0
    dropped_partition: int = 0
    dropped_loss: int = 0
    retransmitted: int = 0  # lost on a link with retransmit_ms: delivered late, not dropped
    dropped_dead: int = 0
    dropped_endpoint: int = 0  # addressed to an advertised endpoint the sender cannot reach
    duplicated: int = 0
    # Error answers the world made up for requests, as the shell does for a failed connection:
    # ``refused``, to a stopped or restarted destination or a refusing endpoint; ``reset``, pending
    # on a connection to a node when it stopped. They then travel like any message (and are counted
    # in ``sent``, ``delivered`` and the drops).
    refused: int = 0
    reset: int = 0


class Network:
    """Link state and delivery policy. ``route`` returns the arrival times of one message."""

    def __init__(self, rng: random.Random, default: LinkProfile | None = None) -> None:
        self._rng = rng
        self.default = default if default is not None else LinkProfile()
        self.default.validate()
        self._links: dict[tuple[int, int], LinkProfile] = {}
        # Directed blocked links; a dict (insertion ordered) rather than a set keeps output stable.
        self._blocked: dict[tuple[int, int], None] = {}
        # (sender, node) -> whether connecting refuses: the sender cannot reach the node's advertised
        # endpoint (its id), while the node's bootstrap address still works (the world routes
        # bootstrap ids apart).
        self._unreachable_endpoints: dict[tuple[int, int], bool] = {}
        self.stats = NetworkStats()

    # -- configuration -------------------------------------------------------------------------

    def set_default(self, profile: LinkProfile) -> None:
        profile.validate()
        self.default = profile

    def set_link(self, source: int, destination: int, profile: LinkProfile) -> None:
        profile.validate()
        self._links[(source, destination)] = profile

    def clear_links(self) -> None:
        self._links.clear()

    def block(self, source: int, destination: int) -> None:
        """One-way partition: messages from ``source`` to ``destination`` are dropped."""
        self._blocked[(source, destination)] = None

    def unblock(self, source: int, destination: int) -> None:
        self._blocked.pop((source, destination), None)

    def partition(self, side_a: Iterable[int], side_b: Iterable[int]) -> None:
        """Symmetric partition: no message crosses between the two sides in either direction."""
        b_list = list(side_b)
        for a in side_a:
            for b in b_list:
                if a != b:
                    self.block(a, b)
                    self.block(b, a)

    def isolate(self, node: int, others: Iterable[int]) -> None:
        self.partition([node], others)

    def block_endpoint(self, source: int, node: int, *, refuse: bool = True) -> None:
        """``source`` cannot reach ``node``'s advertised endpoint (an address that went away);
        ``node``'s bootstrap address and every other link still work.

        ``refuse``: connecting is refused (nothing listens there any more, or no route: the sender
        gets an error after a round trip), else the address is black-holed (the request times out).
        """
        self._unreachable_endpoints[(source, node)] = refuse

    def is_endpoint_unreachable(self, source: int, node: int) -> bool:
        return bool(self._unreachable_endpoints) and (source, node) in self._unreachable_endpoints

    def endpoint_refuses(self, source: int, node: int) -> bool:
        return self._unreachable_endpoints.get((source, node), False)

    def heal(self) -> None:
        """Remove every partition and unreachable endpoint (link profiles stay)."""
        self._blocked.clear()
        self._unreachable_endpoints.clear()

    def is_blocked(self, source: int, destination: int) -> bool:
        return (source, destination) in self._blocked

    def connected(self, a: int, b: int) -> bool:
        return not self.is_blocked(a, b) and not self.is_blocked(b, a)

    @property
    def has_partitions(self) -> bool:
        return bool(self._blocked)

    # -- delivery ------------------------------------------------------------------------------

    def draw_delay_ms(self, source: int, destination: int) -> int:
        """One transit time on the link (no loss, no duplication): half of a refused connect."""
        profile = self._links.get((source, destination), self.default)
        return self._rng.randint(profile.min_delay_ms, profile.max_delay_ms)

    def route(self, source: int, destination: int, depart_ms: int) -> list[int]:
        """Arrival times for one message (empty: dropped; two: duplicated)."""
        self.stats.sent += 1
        if (source, destination) in self._blocked:  # is_blocked, inline (every message)
            self.stats.dropped_partition += 1
            return []
        profile = self._links.get((source, destination), self.default)
        rng = self._rng
        if profile.loss > 0.0 and rng.random() < profile.loss:
            if not profile.retransmit_ms:
                self.stats.dropped_loss += 1
                return []
            # Sent again after the retransmission timeout, doubled each time it is lost again.
            self.stats.retransmitted += 1
            rto = profile.retransmit_ms
            depart_ms += rto
            while rng.random() < profile.loss:
                rto *= 2
                depart_ms += rto
        # randrange(a, b + 1) is what randint(a, b) calls: the same draw, one Python call less.
        arrivals = [depart_ms + rng.randrange(profile.min_delay_ms, profile.max_delay_ms + 1)]
        if profile.duplicate > 0.0 and rng.random() < profile.duplicate:
            self.stats.duplicated += 1
            arrivals.append(depart_ms + rng.randrange(profile.min_delay_ms, profile.max_delay_ms + 1))
        return arrivals
