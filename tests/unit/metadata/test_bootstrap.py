"""``kraft.metadata.bootstrap``: feature defaults, every validation rule, records and their inverse."""

from __future__ import annotations

import pytest

from kraft.metadata.bootstrap import (
    ELR_VERSION,
    FEATURE_RANGES,
    GROUP_VERSION,
    KRAFT_VERSION,
    METADATA_VERSION,
    TRANSACTION_VERSION,
    BootstrapMetadata,
    bootstrap_metadata,
    default_features,
    effective_features,
    parse_feature_flag,
    validate_features,
)
from kraft.metadata.records import ApiMessageAndVersion, MetadataRecordType, MetadataVersion, make_record

MV = MetadataVersion
T = MetadataRecordType


# ---------------------------------------------------------------------------------------------------
# Defaults


def test_a_new_cluster_defaults_to_the_latest_metadata_version_with_elr_on() -> None:
    assert effective_features() == {
        METADATA_VERSION: 25,
        ELR_VERSION: 1,
        GROUP_VERSION: 0,
        KRAFT_VERSION: 0,
        TRANSACTION_VERSION: 0,
    }
    assert bootstrap_metadata().features == {METADATA_VERSION: 25, ELR_VERSION: 1}


@pytest.mark.parametrize(
    ("mv", "elr"),
    [(MV.IBP_3_3_IV0, 0), (MV.IBP_3_9_IV0, 0), (MV.IBP_4_0_IV1, 0), (MV.IBP_4_0_IV2, 1), (MV.IBP_4_0_IV3, 1)],
)
def test_elr_defaults_on_only_where_metadata_version_allows_it(mv: MV, elr: int) -> None:
    assert effective_features(mv)[ELR_VERSION] == elr
    assert default_features(int(mv))[ELR_VERSION] == elr


def test_release_version_and_feature_flags_are_combined() -> None:
    flags = [(GROUP_VERSION, 1), (TRANSACTION_VERSION, 2), (ELR_VERSION, 0)]
    features = effective_features(MV.IBP_4_0_IV2, flags)
    assert features == {
        METADATA_VERSION: 24,
        ELR_VERSION: 0,
        GROUP_VERSION: 1,
        KRAFT_VERSION: 0,
        TRANSACTION_VERSION: 2,
    }


def test_metadata_version_may_be_given_as_a_feature() -> None:
    assert effective_features(None, [(METADATA_VERSION, 17)])[METADATA_VERSION] == 17
    assert effective_features(None, [(METADATA_VERSION, 17)])[ELR_VERSION] == 0
    # both given and equal is fine
    assert effective_features(MV.IBP_3_7_IV2, [(METADATA_VERSION, 17)])[METADATA_VERSION] == 17


def test_the_same_flag_twice_with_the_same_level_is_fine() -> None:
    assert effective_features(None, [(GROUP_VERSION, 1), (GROUP_VERSION, 1)])[GROUP_VERSION] == 1


# ---------------------------------------------------------------------------------------------------
# Errors: each names the feature and what is valid


def error(release: MV | None, *flags: tuple[str, int]) -> str:
    with pytest.raises(ValueError) as e:
        effective_features(release, flags)
    return str(e.value)


def test_release_version_and_metadata_version_feature_that_disagree_are_refused() -> None:
    message = error(MV.IBP_4_0_IV3, (METADATA_VERSION, 24))
    assert "--release-version 4.0-IV3 (level 25)" in message and "metadata.version=24 disagree" in message


def test_a_feature_given_twice_with_different_levels_is_refused() -> None:
    message = error(None, (GROUP_VERSION, 1), (GROUP_VERSION, 0))
    assert message == "--feature group.version is given twice, as 1 and 0"


def test_unknown_feature_is_refused_with_the_known_ones() -> None:
    message = error(None, ("share.version", 1))
    assert message.startswith("unknown feature 'share.version'; known features: ")
    for name in FEATURE_RANGES:
        assert name in message


@pytest.mark.parametrize(
    ("name", "level", "valid"),
    [
        (ELR_VERSION, 2, "0 to 1"),
        (ELR_VERSION, -1, "0 to 1"),
        (GROUP_VERSION, 2, "0 to 1"),
        (TRANSACTION_VERSION, 3, "0 to 2"),
        (TRANSACTION_VERSION, -5, "0 to 2"),
        (KRAFT_VERSION, 2, "0 to 1"),
        (METADATA_VERSION, 26, "4 (3.3-IV0) to 25 (4.0-IV3)"),
        (METADATA_VERSION, 0, "4 (3.3-IV0) to 25 (4.0-IV3)"),
        (METADATA_VERSION, -1, "4 (3.3-IV0) to 25 (4.0-IV3)"),
    ],
)
def test_levels_out_of_range_are_refused_with_the_valid_range(name: str, level: int, valid: str) -> None:
    assert error(None, (name, level)) == f"{name}={level} is out of range; valid levels are {valid}"


@pytest.mark.parametrize("level", [1, 2, 3])
def test_metadata_versions_kafka_cannot_bootstrap_are_refused(level: int) -> None:
    message = error(None, (METADATA_VERSION, level))
    assert f"metadata.version {level} ({MV(level).release}) is too old to bootstrap a cluster" in message
    assert "valid levels are 4 (3.3-IV0) to 25 (4.0-IV3)" in message
    assert "too old" in error(MV(level))


def test_kraft_version_one_is_a_valid_level_but_never_a_bootstrap_record() -> None:
    # KIP-853: the format tool decides when kraft.version 1 is allowed; it lives in the raft log.
    assert effective_features(None, [(KRAFT_VERSION, 1)])[KRAFT_VERSION] == 1
    assert KRAFT_VERSION not in bootstrap_metadata(None, [(KRAFT_VERSION, 1)]).features


@pytest.mark.parametrize("mv", [MV.IBP_3_3_IV0, MV.IBP_3_9_IV0, MV.IBP_4_0_IV0, MV.IBP_4_0_IV1])
def test_elr_one_needs_metadata_version_24(mv: MV) -> None:
    message = error(mv, (ELR_VERSION, 1))
    assert message == (
        f"eligible.leader.replicas.version=1 needs metadata.version 24 (4.0-IV2) or later, "
        f"but it is {int(mv)} ({mv.release})"
    )


def test_validate_features_needs_metadata_version() -> None:
    with pytest.raises(ValueError, match=r"metadata\.version must be set"):
        validate_features({ELR_VERSION: 0})
    validate_features({METADATA_VERSION: 25})  # other features may be left out


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("group.version=1", (GROUP_VERSION, 1)),
        (" metadata.version = 25 ", (METADATA_VERSION, 25)),
        ("x=-1", ("x", -1)),
    ],
)
def test_parse_feature_flag(text: str, expected: tuple[str, int]) -> None:
    assert parse_feature_flag(text) == expected


@pytest.mark.parametrize("text", ["group.version", "=1", "group.version=", "group.version:1", ""])
def test_malformed_feature_flags_are_refused(text: str) -> None:
    with pytest.raises(ValueError, match="is not of the form NAME=LEVEL"):
        parse_feature_flag(text)


def test_a_feature_level_that_is_not_a_number_is_refused() -> None:
    with pytest.raises(ValueError, match=r"the level of group\.version must be a whole number"):
        parse_feature_flag("group.version=one")


# ---------------------------------------------------------------------------------------------------
# BootstrapMetadata and its records (Kafka's BootstrapMetadata.fromVersions)


def test_records_are_metadata_version_first_then_other_non_zero_features_by_name() -> None:
    bootstrap = bootstrap_metadata(MV.IBP_4_0_IV3, [(TRANSACTION_VERSION, 2), (GROUP_VERSION, 1)])
    assert bootstrap.records() == [
        make_record(T.FEATURE_LEVEL, 0, name="metadata.version", feature_level=25),
        make_record(T.FEATURE_LEVEL, 0, name="eligible.leader.replicas.version", feature_level=1),
        make_record(T.FEATURE_LEVEL, 0, name="group.version", feature_level=1),
        make_record(T.FEATURE_LEVEL, 0, name="transaction.version", feature_level=2),
    ]
    assert bootstrap.metadata_version == 25


def test_zero_levels_and_kraft_version_are_not_records() -> None:
    bootstrap = BootstrapMetadata({KRAFT_VERSION: 0, "z": 0, GROUP_VERSION: 0, METADATA_VERSION: 21})
    assert bootstrap.features == {METADATA_VERSION: 21}
    assert [r.data.name for r in bootstrap.records()] == [METADATA_VERSION]


def test_features_are_normalized_to_record_order() -> None:
    bootstrap = BootstrapMetadata({"b": 1, METADATA_VERSION: 25, "a": 2})
    assert list(bootstrap.features) == [METADATA_VERSION, "a", "b"]
    assert bootstrap == BootstrapMetadata({METADATA_VERSION: 25, "a": 2, "b": 1})


@pytest.mark.parametrize(
    ("features", "message"),
    [
        ({ELR_VERSION: 1}, "needs metadata.version"),
        ({METADATA_VERSION: 25, GROUP_VERSION: -1}, "levels are int16 values >= 0"),
        ({METADATA_VERSION: 2**15}, "levels are int16 values >= 0"),
        ({METADATA_VERSION: 25, KRAFT_VERSION: 1}, "kraft.version is not a FeatureLevelRecord"),
    ],
)
def test_bootstrap_metadata_refuses_what_no_file_can_hold(features: dict[str, int], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        BootstrapMetadata(features)


def test_from_records_inverts_records() -> None:
    for bootstrap in (
        bootstrap_metadata(),
        bootstrap_metadata(MV.IBP_3_3_IV0),
        bootstrap_metadata(MV.IBP_4_0_IV2, [(GROUP_VERSION, 1), (TRANSACTION_VERSION, 1), (ELR_VERSION, 0)]),
    ):
        assert BootstrapMetadata.from_records(bootstrap.records()) == bootstrap


def test_from_records_accepts_features_this_build_does_not_know() -> None:
    # A newer Kafka's bootstrap file may name features we do not know; reading is not validating.
    records = [
        make_record(T.FEATURE_LEVEL, name="metadata.version", feature_level=27),
        make_record(T.FEATURE_LEVEL, name="share.version", feature_level=1),
    ]
    assert BootstrapMetadata.from_records(records).features == {METADATA_VERSION: 27, "share.version": 1}


@pytest.mark.parametrize(
    ("records", "message"),
    [
        ([], "no FeatureLevelRecord for metadata.version"),
        (
            [make_record(T.FEATURE_LEVEL, name="group.version", feature_level=1)],
            "no FeatureLevelRecord for metadata.version",
        ),
        (
            [make_record(T.FEATURE_LEVEL, name="metadata.version", feature_level=25), make_record(T.NO_OP)],
            "holds a NoOpRecord; only FeatureLevelRecords",
        ),
        (
            [
                make_record(T.FEATURE_LEVEL, name="metadata.version", feature_level=25),
                make_record(T.FEATURE_LEVEL, name="metadata.version", feature_level=24),
            ],
            "sets metadata.version twice",
        ),
        ([make_record(T.FEATURE_LEVEL, name="metadata.version", feature_level=-3)], "negative level -3"),
    ],
)
def test_from_records_refuses_what_is_not_bootstrap_metadata(
    records: list[ApiMessageAndVersion], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        BootstrapMetadata.from_records(records)
