"""kraft.version in the feature rules: supported 0..1, finalized from the raft log, and raised
from 0 to 1 through UpdateFeatures by the raft layer, never as a FeatureLevelRecord (Kafka 4.1,
KAFKA-16538)."""

from __future__ import annotations

from clusters import ControllerCluster

from kraft.controller.features import (
    KRAFT_VERSION,
    SUPPORTED_FEATURES,
    FeatureUpdate,
    UpgradeType,
    finalized_features,
    validate_updates,
)
from kraft.metadata.image import MetadataImage
from kraft.protocol.error_codes import ErrorCode
from kraft.protocol.messages import update_features
from kraft.raft.types import ReplicaKey


def test_kraft_version_zero_and_one_are_supported() -> None:
    assert SUPPORTED_FEATURES[KRAFT_VERSION] == (0, 1)


def test_kraft_version_is_finalized_only_when_the_log_says_one() -> None:
    assert KRAFT_VERSION not in finalized_features(MetadataImage.EMPTY, 0)
    assert finalized_features(MetadataImage.EMPTY, 1)[KRAFT_VERSION] == 1


def test_the_feature_rules_never_write_kraft_version_as_a_feature_record() -> None:
    outcome = validate_updates(MetadataImage.EMPTY, 1, [FeatureUpdate(KRAFT_VERSION, 1, UpgradeType.UPGRADE)])
    assert outcome.error_code == ErrorCode.INVALID_UPDATE_VERSION
    assert outcome.records == ()


def test_update_features_upgrades_a_static_quorum_once_it_commits() -> None:
    c = ControllerCluster(3)
    c.wait_active()
    cls = update_features.REQUEST.cls

    def update(level: int, kind: int = 1, validate_only: bool = False, more: tuple[str, ...] = ()) -> object:
        keys = [cls.FeatureUpdateKey(feature=KRAFT_VERSION, max_version_level=level, upgrade_type=kind)]
        keys += [cls.FeatureUpdateKey(feature=f, max_version_level=1, upgrade_type=1) for f in more]
        return c.call(update_features, 1, timeout_ms=1000, validate_only=validate_only, feature_updates=keys)

    c.run_until(lambda: all(n.raft.high_watermark is not None for n in c.nodes.values()))
    mixed = update(1, more=("eligible.leader.replicas.version",))
    assert mixed.error_code == ErrorCode.INVALID_REQUEST  # type: ignore[attr-defined]
    assert update(1, validate_only=True).error_code == 0  # type: ignore[attr-defined]
    assert all(n.raft.kraft_version == 0 for n in c.nodes.values())
    answer = update(1)
    assert answer.error_code == 0, answer  # type: ignore[attr-defined]
    active = c.wait_active()
    raft = c.nodes[active.node_id].raft
    # Answered after the commit: the leader already runs kraft.version 1 with the voters' disks.
    assert raft.kraft_version == 1
    assert set(raft.voter_set.keys()) == {ReplicaKey(n, c.directory_id(n)) for n in (1, 2, 3)}
    c.run_until(lambda: all(n.raft.kraft_version == 1 for n in c.nodes.values()))
    again = update(1)  # already in force: nothing to do
    assert again.error_code == 0, again  # type: ignore[attr-defined]
    refused = update(0, kind=2)
    assert refused.error_code == ErrorCode.INVALID_UPDATE_VERSION  # type: ignore[attr-defined]
    assert "cannot be downgraded" in refused.error_message  # type: ignore[attr-defined]


def test_release_version_updates_carry_kraft_version_at_its_level_untouched() -> None:
    """``--release-version`` sends every feature, kraft.version at 0 among them: at the level in
    force it changes nothing and does not turn the request into a kraft.version upgrade."""
    c = ControllerCluster(1)
    c.start_brokers([1])
    cls = update_features.REQUEST.cls
    keys = [
        cls.FeatureUpdateKey(feature=KRAFT_VERSION, max_version_level=0, upgrade_type=2),
        cls.FeatureUpdateKey(feature="eligible.leader.replicas.version", max_version_level=0, upgrade_type=2),
    ]
    answer = c.call(update_features, 1, timeout_ms=1000, validate_only=False, feature_updates=keys)
    assert answer.error_code == 0, answer
    assert "eligible.leader.replicas.version" not in c.image().features
    assert all(n.raft.kraft_version == 0 for n in c.nodes.values())
