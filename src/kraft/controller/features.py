"""Feature levels: what this build supports, and the UpdateFeatures rules (spec 6.7, 5.2).

Finalized levels live in the image (FeatureLevelRecord). An update is valid only if every
registered broker and every controller (this build) supports the level, the upgrade type allows
the direction, and dependencies hold (``eligible.leader.replicas.version`` 1 needs metadata.version
4.0-IV2 (24) or later). ``metadata.version`` downgrades are refused unless UNSAFE and even then only
where no record format changes (this project never downgrades metadata.version: spec 1.5 writes
the newest formats, so a downgrade would leave unreadable records for older software).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kraft.metadata.image import MetadataImage
from kraft.metadata.records import (
    LATEST_METADATA_VERSION,
    MINIMUM_KRAFT_METADATA_VERSION,
    MetadataRecordType,
    MetadataVersion,
    make_record,
)
from kraft.metadata.records import ApiMessageAndVersion as Record
from kraft.protocol.error_codes import ErrorCode

METADATA_VERSION = "metadata.version"
ELR_VERSION = "eligible.leader.replicas.version"
KRAFT_VERSION = "kraft.version"

# (min, max) levels this build supports, as advertised in ApiVersions and BrokerRegistration.
# kraft.version 1 (KIP-853 dynamic voters) is supported by the raft layer; its finalized level is
# the one in the raft log's KRaftVersionRecord, never a FeatureLevelRecord (see ``validate_updates``).
SUPPORTED_FEATURES: Mapping[str, tuple[int, int]] = {
    METADATA_VERSION: (int(MINIMUM_KRAFT_METADATA_VERSION), int(LATEST_METADATA_VERSION)),
    ELR_VERSION: (0, 1),
    KRAFT_VERSION: (0, 1),
    "group.version": (0, 1),
    "transaction.version": (0, 2),
}

# feature -> (level -> minimum metadata.version)
_DEPENDENCIES: Mapping[str, Mapping[int, int]] = {
    ELR_VERSION: {1: int(MetadataVersion.IBP_4_0_IV2)},
}


class UpgradeType(enum.IntEnum):
    UNKNOWN = 0
    UPGRADE = 1
    SAFE_DOWNGRADE = 2
    UNSAFE_DOWNGRADE = 3


@dataclass(frozen=True, slots=True)
class FeatureUpdate:
    feature: str
    level: int
    upgrade_type: UpgradeType


@dataclass(frozen=True, slots=True)
class FeatureUpdateOutcome:
    records: tuple[Record, ...]
    error_code: int
    error_message: str | None
    per_feature: tuple[tuple[str, int, str | None], ...]


def supported_range(image: MetadataImage, node_id: int, feature: str) -> tuple[int, int]:
    """The range every registered broker and this controller support (brokers that do not list a
    feature support only level 0 of it; spec 2.1 step 4)."""
    low, high = SUPPORTED_FEATURES.get(feature, (0, 0))
    for broker in image.brokers.values():
        ranges = {name: (lo, hi) for name, lo, hi in broker.supported_features}
        lo, hi = ranges.get(feature, (0, 0))
        low, high = max(low, lo), min(high, hi)
    return low, high


def validate_updates(
    image: MetadataImage, node_id: int, updates: Sequence[FeatureUpdate]
) -> FeatureUpdateOutcome:
    """Kafka's FeatureControlManager.updateFeatures, all-or-nothing (the whole request fails if
    one update is invalid, as Kafka 3.x+ does for UpdateFeatures v1)."""
    finalized = dict(image.features)
    proposed = dict(finalized)
    seen: set[str] = set()
    results: list[tuple[str, int, str | None]] = []
    error: tuple[int, str] | None = None
    for u in updates:
        problem = None
        if u.feature in seen:
            problem = f"Feature {u.feature} was specified more than once."
        seen.add(u.feature)
        current = finalized.get(u.feature, 0)
        if problem is None and u.feature not in SUPPORTED_FEATURES:
            problem = f"Unknown feature {u.feature}."
        if problem is None and u.level < 0:
            problem = f"Invalid level {u.level} for feature {u.feature}."
        if problem is None and u.upgrade_type == UpgradeType.UNKNOWN:
            problem = f"Unknown upgrade type for feature {u.feature}."
        if problem is None and u.level > current and u.upgrade_type != UpgradeType.UPGRADE:
            problem = f"Can't upgrade {u.feature} to {u.level} with a downgrade request."
        if problem is None and u.level < current and u.upgrade_type == UpgradeType.UPGRADE:
            problem = (
                f"Can't downgrade the version of feature {u.feature} from {current} to {u.level} "
                "without setting the upgrade type to safe or unsafe downgrade."
            )
        if problem is None and u.feature == KRAFT_VERSION and u.level > 0:
            # kraft.version lives in the raft log: formatting sets it (--standalone or
            # --initial-controllers), or the raft leader raises it (QuorumController hands an
            # UpdateFeatures of kraft.version to it before these rules); never a FeatureLevelRecord.
            problem = f"Feature {KRAFT_VERSION} is written by the raft layer, not as a feature record."
        if problem is None and u.feature == METADATA_VERSION:
            if u.level < int(MINIMUM_KRAFT_METADATA_VERSION):
                problem = f"metadata.version cannot be set below {int(MINIMUM_KRAFT_METADATA_VERSION)}."
            elif u.level < current:
                problem = (
                    f"Refusing to downgrade metadata.version from {current} to {u.level}: this "
                    "controller writes the newest record formats, which older levels cannot read."
                )
        if problem is None and u.level > 0:
            low, high = supported_range(image, node_id, u.feature)
            if not low <= u.level <= high:
                problem = (
                    f"Invalid update version {u.level} for feature {u.feature}. The cluster supports "
                    f"levels {low} to {high} (every registered broker and the controller)."
                )
        if problem is not None:
            results.append((u.feature, int(ErrorCode.INVALID_UPDATE_VERSION), problem))
            error = error or (int(ErrorCode.INVALID_UPDATE_VERSION), problem)
            continue
        proposed[u.feature] = u.level
        results.append((u.feature, 0, None))
    if error is None:
        mv = proposed.get(METADATA_VERSION, 0)
        for feature, needs in _DEPENDENCIES.items():
            level = proposed.get(feature, 0)
            need = needs.get(level)
            if need is not None and mv < need:
                msg = f"{feature}={level} requires metadata.version {need} or later, but it would be {mv}."
                error = (int(ErrorCode.INVALID_UPDATE_VERSION), msg)
                results = [
                    (
                        f,
                        int(ErrorCode.INVALID_UPDATE_VERSION) if f == feature else c,
                        msg if f == feature else m,
                    )
                    for f, c, m in results
                ]
    if error is not None:
        # All or nothing: valid entries are reported as not attempted when another failed.
        results = [
            (f, c if c else int(ErrorCode.INVALID_UPDATE_VERSION), m or "Another feature update failed.")
            for f, c, m in results
        ]
        return FeatureUpdateOutcome((), error[0], error[1], tuple(results))
    records: list[Record] = []
    # metadata.version first, as Kafka writes it.
    for name in sorted(proposed, key=lambda n: (n != METADATA_VERSION, n)):
        if proposed[name] != finalized.get(name, 0):
            records.append(
                make_record(MetadataRecordType.FEATURE_LEVEL, name=name, feature_level=proposed[name])
            )
    return FeatureUpdateOutcome(tuple(records), 0, None, tuple(results))


def finalized_features(image: MetadataImage, kraft_version: int) -> dict[str, int]:
    """ApiVersions' FinalizedFeatures: the image's levels plus ``kraft.version`` from the raft log
    when it is above 0 (Kafka reports the KRaftVersionRecord's level the same way)."""
    features = dict(image.features)
    if kraft_version > 0:
        features[KRAFT_VERSION] = kraft_version
    return features


def elr_enabled(image: MetadataImage) -> bool:
    """KIP-966 is on when the feature is at level 1 (spec 5.2, the 4.0+ gating) and MV allows it."""
    return image.features.get(ELR_VERSION, 0) >= 1 and image.metadata_version >= int(
        MetadataVersion.IBP_4_0_IV1
    )
