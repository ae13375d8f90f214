"""A controller node: one raft core and one quorum controller driven by a single ``poll``.

``ControllerNode.poll(now_ms, inbound)`` keeps the core's contract (never blocks, no clock, no
socket): inbound ``ControllerEnvelope`` requests go to the controller, everything else to the raft
core. The controller runs before the core (so the records of this poll's requests are drained in
the same poll) and after it (so responses of batches that just committed leave at once, and a
just-announced leader activates). Every other attribute reads through to the raft core, so the
shells (server driver, simulator) treat it as the node.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, cast

from kraft.controller.quorum_controller import ControllerEnvelope, QuorumController
from kraft.raft.messages import Envelope
from kraft.raft.node import PollResult, RaftNode


class ControllerNode:
    def __init__(self, raft: RaftNode, controller: QuorumController) -> None:
        self.raft = raft
        self.controller = controller
        raft.register(controller)

    def poll(self, now_ms: int, inbound: Iterable[Envelope | ControllerEnvelope] = ()) -> PollResult:
        raft_inbound: list[Envelope] = []
        for envelope in inbound:
            if isinstance(envelope, ControllerEnvelope):
                self.controller.handle(envelope, now_ms)
            else:
                raft_inbound.append(envelope)
        before, wake_before = self.controller.poll(now_ms)
        result = self.raft.poll(now_ms, raft_inbound)
        appended_from = self.raft.next_append_offset()
        after, wake_after = self.controller.poll(now_ms)
        if before or after:
            result.outbound.extend(cast(list[Envelope], before + after))
        wake = result.wake_at_ms
        for w in (wake_before, wake_after):
            if w is not None:
                wake = min(wake, max(w, now_ms))
        if self.raft.next_append_offset() != appended_from:
            # Records queued after the core's poll: come back when the accumulator lingers out.
            wake = min(wake, now_ms + self.raft.config.append_linger_ms)
        if self.controller.has_queued_requests:
            wake = min(wake, now_ms + 1)
        result.wake_at_ms = wake
        return result

    def __getattr__(self, name: str) -> Any:
        return getattr(self.raft, name)
