"""The short version of ``benchmarks/jepsen_dataplane.py`` (``make jepsen`` runs the long one).

3 controllers and 3 brokers as real processes, confluent-kafka producers (acks=all) and consumers,
and a nemesis that kills (-9), pauses and restarts brokers and the active controller for a few
seconds; then the checker of ``tests/support/jepsen_history.py`` over what the clients saw. It
proves that under those faults no acknowledged write is lost, no offset holds two values, no
consumer goes backwards, every acknowledged offset holds its value and no value appears twice
except as a producer's resend (idempotence is off: librdkafka resends a batch a deposed leader
answered NOT_LEADER_OR_FOLLOWER after appending it, as Kafka answers; see
``jepsen_history.Duplicate.retry_shaped``), and that the run really exercised something (writes
acknowledged, faults injected, a final read).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from jepsen_history import check, format_table, format_timeline
from jepsen_workload import JepsenConfig, run

pytest.importorskip("confluent_kafka")

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("jepsen-dataplane")]


@pytest.mark.timeout(180)
def test_acknowledged_writes_survive_broker_and_controller_faults(tmp_path: Path) -> None:
    config = JepsenConfig(
        seconds=15,
        seed=7,
        producers=2,
        consumers=1,
        partitions=3,
        rate_per_producer=40,
        warmup_s=2,
        recovery_s=3,
        heal_timeout_s=30,
        drain_timeout_s=5,
        final_read_timeout_s=30,
    )
    outcome = run(config, tmp_path)
    history = outcome.history
    result = check(history)
    report = f"{format_table(result)}\n{outcome.notes}\n{format_timeline(history, outcome.wall_start)}"
    counts = result.gated_counts()
    assert counts == {**dict.fromkeys(counts, 0), "duplicates": counts["duplicates"]}, report
    assert result.unexplained_duplicates == (), report
    assert result.acked > 200, report
    assert any(e.action == "kill -9" for e in history.nemesis), report
    # Every partition was read to its end after the heal, and that end holds every acked write.
    assert result.final_read_incomplete == (), report
    assert set(history.final_ends) == {0, 1, 2}
    assert sum(history.final_ends.values()) >= result.acked, report
