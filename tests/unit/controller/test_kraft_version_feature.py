"""kraft.version in the feature rules: supported 0..1, finalized from the raft log, never updated
through UpdateFeatures (KIP-853 sets it at format time)."""

from __future__ import annotations

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


def test_kraft_version_zero_and_one_are_supported() -> None:
    assert SUPPORTED_FEATURES[KRAFT_VERSION] == (0, 1)


def test_kraft_version_is_finalized_only_when_the_log_says_one() -> None:
    assert KRAFT_VERSION not in finalized_features(MetadataImage.EMPTY, 0)
    assert finalized_features(MetadataImage.EMPTY, 1)[KRAFT_VERSION] == 1


def test_update_features_cannot_raise_kraft_version() -> None:
    outcome = validate_updates(MetadataImage.EMPTY, 1, [FeatureUpdate(KRAFT_VERSION, 1, UpgradeType.UPGRADE)])
    assert outcome.error_code == ErrorCode.INVALID_UPDATE_VERSION
    assert outcome.records == ()
    assert (
        outcome.error_message is not None and "--standalone or --initial-controllers" in outcome.error_message
    )
