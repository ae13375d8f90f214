"""Bootstrap metadata: the feature levels a new cluster starts with (spec 1.7, 1.5, 5.2).

``kraft storage format`` turns ``--release-version`` and ``--feature NAME=LEVEL`` into a
``BootstrapMetadata`` (``bootstrap_metadata``), which ``kraft.storage.bootstrap_file`` writes as
``bootstrap.checkpoint``; the first active controller of an empty log replays its records. As in
Kafka's ``BootstrapMetadata.fromVersions``, the records are one FeatureLevelRecord for
metadata.version first, then one per other feature with a level above 0, sorted by name;
``kraft.version`` never becomes a FeatureLevelRecord (it lives in the raft control records).
After them come the UserScramCredentialRecords of ``--add-scram`` (Kafka's ``Formatter`` adds them
to the bootstrap records the same way), which need metadata.version 3.5-IV2 or later.

The rules (``validate_features``), each refused with a ``ValueError`` naming the feature and what is
valid:

* known features only: ``metadata.version`` 4..25 (Kafka's ``BootstrapMetadata`` refuses to
  bootstrap below 3.3-IV0, level 4), ``eligible.leader.replicas.version`` 0..1,
  ``kraft.version`` 0..1 (1 is KIP-853 dynamic voters; the format tool decides whether it is
  allowed, and it never becomes a record here), ``group.version`` 0..1, ``transaction.version``
  0..2;
* ``eligible.leader.replicas.version`` 1 needs metadata.version 24 (4.0-IV2) or later;
* ``--release-version`` and ``--feature metadata.version=N`` must agree when both are given.

Defaults for features not given (``default_features``): metadata.version 25 (4.0-IV3, spec 1.5
DECISION); ``eligible.leader.replicas.version`` 1 when metadata.version allows it, else 0 (spec 5.2
DECISION: on for new clusters); everything else 0.

Pure: no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from kraft.metadata.records import (
    LATEST_METADATA_VERSION,
    ApiMessageAndVersion,
    MetadataRecordType,
    MetadataVersion,
    make_record,
)

METADATA_VERSION = "metadata.version"
ELR_VERSION = "eligible.leader.replicas.version"
KRAFT_VERSION = "kraft.version"
GROUP_VERSION = "group.version"
TRANSACTION_VERSION = "transaction.version"

# Kafka's BootstrapMetadata refuses anything older (MetadataVersion.MINIMUM_BOOTSTRAP_VERSION).
MINIMUM_BOOTSTRAP_METADATA_VERSION = MetadataVersion.IBP_3_3_IV0
# eligible.leader.replicas.version=1 needs this metadata.version (spec 5.2).
ELR_MINIMUM_METADATA_VERSION = MetadataVersion.IBP_4_0_IV2

# feature -> (lowest, highest) level this build can bootstrap.
FEATURE_RANGES: Mapping[str, tuple[int, int]] = {
    METADATA_VERSION: (int(MINIMUM_BOOTSTRAP_METADATA_VERSION), int(LATEST_METADATA_VERSION)),
    ELR_VERSION: (0, 1),
    GROUP_VERSION: (0, 1),
    KRAFT_VERSION: (0, 1),
    TRANSACTION_VERSION: (0, 2),
}

_INT16_MAX = 0x7FFF


def _mv_text(level: int) -> str:
    try:
        return f"{level} ({MetadataVersion(level).release})"
    except ValueError:
        return str(level)


def _range_text(name: str) -> str:
    low, high = FEATURE_RANGES[name]
    if name == METADATA_VERSION:
        return f"{_mv_text(low)} to {_mv_text(high)}"
    return str(low) if low == high else f"{low} to {high}"


def parse_feature_flag(text: str) -> tuple[str, int]:
    """``NAME=LEVEL`` as given to ``--feature``.

    Raises:
        ValueError: not of that form, or the level is not a whole number.
    """
    name, sep, level_text = text.partition("=")
    name, level_text = name.strip(), level_text.strip()
    if not sep or not name or not level_text:
        raise ValueError(f"--feature {text!r} is not of the form NAME=LEVEL (e.g. {ELR_VERSION}=1)")
    try:
        level = int(level_text)
    except ValueError:
        raise ValueError(f"--feature {text!r}: the level of {name} must be a whole number") from None
    return name, level


def default_features(metadata_version: int) -> dict[str, int]:
    """The level of every known feature for a new cluster at ``metadata_version``."""
    return {
        METADATA_VERSION: metadata_version,
        ELR_VERSION: 1 if metadata_version >= ELR_MINIMUM_METADATA_VERSION else 0,
        GROUP_VERSION: 0,
        KRAFT_VERSION: 0,
        TRANSACTION_VERSION: 0,
    }


def validate_features(features: Mapping[str, int]) -> None:
    """Check a complete feature map against the rules in the module docstring.

    Raises:
        ValueError: the first broken rule, naming the feature and the valid levels.
    """
    if METADATA_VERSION not in features:
        raise ValueError(f"{METADATA_VERSION} must be set")
    for name in sorted(features):
        level = features[name]
        if name not in FEATURE_RANGES:
            raise ValueError(f"unknown feature {name!r}; known features: {', '.join(sorted(FEATURE_RANGES))}")
        low, high = FEATURE_RANGES[name]
        if low <= level <= high:
            continue
        if name == METADATA_VERSION and 0 < level < low:
            raise ValueError(
                f"{METADATA_VERSION} {_mv_text(level)} is too old to bootstrap a cluster; "
                f"valid levels are {_range_text(name)}"
            )
        raise ValueError(f"{name}={level} is out of range; valid levels are {_range_text(name)}")
    mv = features[METADATA_VERSION]
    if features.get(ELR_VERSION, 0) >= 1 and mv < ELR_MINIMUM_METADATA_VERSION:
        raise ValueError(
            f"{ELR_VERSION}={features[ELR_VERSION]} needs {METADATA_VERSION} "
            f"{_mv_text(int(ELR_MINIMUM_METADATA_VERSION))} or later, but it is {_mv_text(mv)}"
        )


def effective_features(
    release_version: MetadataVersion | None = None, requested: Iterable[tuple[str, int]] = ()
) -> dict[str, int]:
    """The validated levels of every known feature from the format command's options.

    Args:
        release_version: ``--release-version``, if given.
        requested: ``--feature`` flags as (name, level), in the order given.

    Raises:
        ValueError: a feature given twice with different levels, ``--release-version`` and
            ``--feature metadata.version`` that disagree, or a broken rule (``validate_features``).
    """
    given: dict[str, int] = {}
    for name, level in requested:
        if name in given and given[name] != level:
            raise ValueError(f"--feature {name} is given twice, as {given[name]} and {level}")
        given[name] = level
    if release_version is not None and given.get(METADATA_VERSION, int(release_version)) != release_version:
        raise ValueError(
            f"--release-version {release_version.release} (level {int(release_version)}) and "
            f"--feature {METADATA_VERSION}={given[METADATA_VERSION]} disagree; give one of them"
        )
    mv = given.get(METADATA_VERSION, int(release_version or LATEST_METADATA_VERSION))
    features = default_features(mv)
    features.update(given)
    validate_features(features)
    return features


@dataclass(frozen=True, slots=True)
class BootstrapMetadata:
    """The finalized features a new cluster starts with, and its first SCRAM credentials.

    ``features`` always holds ``metadata.version``; other features appear only with a level above 0
    (a level of 0 is the same as absent, and it is what a bootstrap file can express). Built from
    a map with zeros or ``kraft.version=0``, those entries are dropped; the order is metadata.version
    first, then by name, as the records are.
    """

    features: dict[str, int]
    # UserScramCredentialRecords (``kraft storage format --add-scram``), in the order given.
    scram_records: tuple[ApiMessageAndVersion, ...] = ()

    def __post_init__(self) -> None:
        if METADATA_VERSION not in self.features:
            raise ValueError(f"bootstrap metadata needs {METADATA_VERSION}")
        for name, level in self.features.items():
            if not isinstance(level, int) or not 0 <= level <= _INT16_MAX:
                raise ValueError(f"feature {name} has level {level!r}; levels are int16 values >= 0")
        if self.features.get(KRAFT_VERSION, 0) > 0:
            raise ValueError(f"{KRAFT_VERSION} is not a FeatureLevelRecord and cannot be bootstrapped here")
        others = sorted(
            (n, v) for n, v in self.features.items() if n not in (METADATA_VERSION, KRAFT_VERSION) and v > 0
        )
        normalized = {METADATA_VERSION: self.features[METADATA_VERSION], **dict(others)}
        object.__setattr__(self, "features", normalized)
        object.__setattr__(self, "scram_records", tuple(self.scram_records))
        for record in self.scram_records:
            if record.type is not MetadataRecordType.USER_SCRAM_CREDENTIAL:
                raise ValueError(
                    f"bootstrap SCRAM records must be UserScramCredentialRecords, not {record!r}"
                )
        if self.scram_records and self.metadata_version < MetadataVersion.IBP_3_5_IV2:
            raise ValueError(
                f"SCRAM credentials need {METADATA_VERSION} {_mv_text(int(MetadataVersion.IBP_3_5_IV2))} "
                f"or later, but it is {_mv_text(self.metadata_version)}"
            )

    @property
    def metadata_version(self) -> int:
        return self.features[METADATA_VERSION]

    def records(self) -> list[ApiMessageAndVersion]:
        """FeatureLevelRecords (v0): metadata.version, then the other features by name; then the
        SCRAM records."""
        return [
            *(
                make_record(MetadataRecordType.FEATURE_LEVEL, 0, name=name, feature_level=level)
                for name, level in self.features.items()
            ),
            *self.scram_records,
        ]

    @staticmethod
    def from_records(records: Sequence[ApiMessageAndVersion]) -> BootstrapMetadata:
        """The inverse of ``records`` (what a bootstrap file holds).

        Raises:
            ValueError: a record that is neither a FeatureLevelRecord nor a
                UserScramCredentialRecord, a feature set twice, or no metadata.version.
        """
        features: dict[str, int] = {}
        scram: list[ApiMessageAndVersion] = []
        for record in records:
            if record.type is MetadataRecordType.USER_SCRAM_CREDENTIAL:
                scram.append(record)
                continue
            if record.type is not MetadataRecordType.FEATURE_LEVEL:
                raise ValueError(
                    f"bootstrap metadata holds a {record.type.record_name}; "
                    "only FeatureLevelRecords and UserScramCredentialRecords are supported"
                )
            name, level = record.data.name, record.data.feature_level
            if name in features:
                raise ValueError(f"bootstrap metadata sets {name} twice")
            if level < 0:
                raise ValueError(f"bootstrap metadata sets {name} to a negative level {level}")
            features[name] = level
        if METADATA_VERSION not in features:
            raise ValueError(f"no FeatureLevelRecord for {METADATA_VERSION} in the bootstrap metadata")
        return BootstrapMetadata(features, tuple(scram))


def bootstrap_metadata(
    release_version: MetadataVersion | None = None, requested: Iterable[tuple[str, int]] = ()
) -> BootstrapMetadata:
    """``BootstrapMetadata`` from the format command's options (see ``effective_features``);
    ``kraft.version`` is left out (it lives in the raft log's control records)."""
    features = effective_features(release_version, requested)
    features.pop(KRAFT_VERSION, None)
    return BootstrapMetadata(features)
