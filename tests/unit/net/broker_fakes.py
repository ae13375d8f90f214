"""Fakes for the broker listener's tests (``BrokerApis``): the node behind it and its forwarder."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kraft.controller.quorum_controller import ControllerRequest, ControllerResponse
from kraft.metadata.image import MetadataImage
from kraft.net.channel import ChannelError
from kraft.protocol.api import Api
from kraft.raft.types import LeaderAndEpoch


class Core:
    """A broker node (id 4) that knows ``leader`` (epoch 3) and serves the image ``current``."""

    def __init__(self, leader: int | None = 1) -> None:
        self.node_id = 4
        self.leader = LeaderAndEpoch(leader, 3)
        self.current = MetadataImage.EMPTY

    def image(self) -> MetadataImage:
        return self.current

    def leader_and_epoch(self) -> LeaderAndEpoch:
        return self.leader

    async def submit_controller(self, source: int, request: ControllerRequest) -> ControllerResponse:
        raise AssertionError("not a combined node: nothing may reach a quorum controller here")


class Forwarder:
    """Answers each call with the next scripted outcome (an exception, or a response body); once
    they run out, every call fails with ChannelError("connection refused"). ``calls`` records
    (destination, api key, version, request body) of each."""

    def __init__(self, outcomes: list[Any]) -> None:
        self.outcomes = outcomes
        self.calls: list[tuple[int, int, int | None, Any]] = []

    async def call(
        self,
        destination: int,
        api: Api,
        build_body: Callable[[int], Any],
        *,
        version: int | None = None,
        timeout_ms: int | None = None,
    ) -> tuple[int, Any]:
        self.calls.append((destination, api.key, version, build_body(version or 0)))
        outcome = self.outcomes.pop(0) if self.outcomes else ChannelError("connection refused")
        if isinstance(outcome, Exception):
            raise outcome
        return version or 0, outcome
