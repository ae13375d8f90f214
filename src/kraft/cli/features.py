"""``kraft features``: Kafka's ``kafka-features`` against our controllers (spec 6.7).

    kraft features --bootstrap-controller HOST:PORT describe [--json]
    kraft features --bootstrap-controller HOST:PORT upgrade --feature NAME=LEVEL... [--dry-run]
    kraft features --bootstrap-controller HOST:PORT upgrade --release-version 4.0 [--dry-run]
    kraft features --bootstrap-controller HOST:PORT downgrade --feature NAME=LEVEL... [--unsafe] [--dry-run]
    kraft features --bootstrap-controller HOST:PORT disable --feature NAME... [--unsafe] [--dry-run]

``describe`` reads ApiVersions v3+ (SupportedFeatures, FinalizedFeatures, FinalizedFeaturesEpoch)
from any bootstrap node and prints Kafka's line per supported feature::

    Feature: metadata.version→SupportedMinVersion: 3.0-IV1→SupportedMaxVersion: 4.0-IV3→
        FinalizedVersionLevel: 4.0-IV3→Epoch: 42          (one line; → is a TAB)

(metadata.version levels as release strings, other features as numbers, ``Epoch: -`` when the node
did not say). ``upgrade``/``downgrade``/``disable`` send one UpdateFeatures v1 request (UpgradeType
1 upgrade, 2 safe downgrade, 3 unsafe downgrade with ``--unsafe``; ValidateOnly with
``--dry-run``) to the active controller, following NOT_CONTROLLER, and print Kafka's line per
feature (``<name> was upgraded to <level>.``, ``Could not upgrade <name> to <level>. <reason>``,
``<name> can be upgraded to <level>.`` on a dry run, ...). ``--release-version`` sets
metadata.version and the other features to their defaults for that release (as ``kraft storage
format`` would; an upgrade leaves out features whose default is 0, as Kafka does).

Not here: Kafka's ``version-mapping`` and ``feature-dependencies`` commands.

Exit status: 0 success, 1 when a feature update failed or no node answered, 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from typing import Any, TextIO

from kraft.cli.common import (
    UsageError,
    add_bootstrap_options,
    add_command_config_option,
    add_json_option,
    add_timeout_options,
    admin_client_from_args,
    check_timeouts,
    run_tool,
)
from kraft.client.admin import AdminClient
from kraft.client.connection import AdminError, FeatureMetadata
from kraft.metadata.bootstrap import MINIMUM_BOOTSTRAP_METADATA_VERSION, default_features
from kraft.metadata.records import LATEST_METADATA_VERSION, MetadataVersion, parse_release_version

PROG = "kraft features"
METADATA_VERSION = "metadata.version"
UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE = 1, 2, 3
_SHORT_MIN, _SHORT_MAX = -0x8000, 0x7FFF

ClientFactory = Callable[[argparse.Namespace], AdminClient]


class _Failed(Exception):
    pass


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG, description="This tool manages feature flags in Kafka.")
    add_bootstrap_options(parser, server_help="comma-separated host:port pairs of nodes to connect to")
    add_command_config_option(parser)
    add_timeout_options(
        parser,
        request_timeout_ms_default=5_000,
        timeout_help="give up when no (active) node has answered within this time",
        request_timeout_help="deadline of each single request",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    describe = sub.add_parser("describe", help="Describes the current active feature flags.")
    add_json_option(describe)

    upgrade = sub.add_parser("upgrade", help="Upgrade one or more feature flags.")
    _add_level_options(upgrade, "upgrade")
    upgrade.add_argument(
        "--dry-run", action="store_true", help="Validate this upgrade, but do not perform it."
    )

    downgrade = sub.add_parser("downgrade", help="Downgrade one or more feature flags.")
    _add_level_options(downgrade, "downgrade")
    downgrade.add_argument(
        "--unsafe",
        action="store_true",
        help="Perform this downgrade even if it may irreversibly destroy metadata.",
    )
    downgrade.add_argument(
        "--dry-run", action="store_true", help="Validate this downgrade, but do not perform it."
    )

    disable = sub.add_parser(
        "disable",
        help="Disable one or more feature flags. This is the same as downgrading the version to zero.",
    )
    disable.add_argument("--feature", action="append", metavar="NAME", help="A feature flag to disable.")
    disable.add_argument(
        "--unsafe",
        action="store_true",
        help="Disable this feature flag even if it may irreversibly destroy metadata.",
    )
    disable.add_argument(
        "--dry-run", action="store_true", help="Perform a dry-run of this disable operation."
    )
    return parser


def _add_level_options(p: argparse.ArgumentParser, op: str) -> None:
    p.add_argument(
        "--metadata",
        metavar="RELEASE",
        help=f"DEPRECATED -- The level to which we should {op} the metadata. For example, 3.3-IV3.",
    )
    p.add_argument(
        "--release-version",
        metavar="RELEASE",
        help=f"The release version to {op} all features to, e.g. 4.0 or 3.9-IV0 (metadata.version and "
        "the other features' defaults for that release).",
    )
    p.add_argument(
        "--feature",
        action="append",
        metavar="NAME=LEVEL",
        help=f"A feature {op} we should perform, in feature=level format. For example: "
        "`eligible.leader.replicas.version=1`.",
    )


# ---------------------------------------------------------------------------------------------------
# Pure parts


def level_to_string(feature: str, level: int) -> str:
    """Kafka's ``FeatureCommand.levelToString``: metadata.version as its release (``4.0-IV3``)."""
    if feature == METADATA_VERSION:
        try:
            return MetadataVersion(level).release
        except ValueError:
            return f"UNKNOWN {level}"
    return str(level)


def format_describe(meta: FeatureMetadata) -> str:
    """One line per supported feature, sorted by name, as ``kafka-features describe`` prints."""
    epoch = "-" if meta.epoch is None else str(meta.epoch)
    lines = []
    for name in sorted(meta.supported):
        low, high = meta.supported[name]
        finalized = meta.finalized.get(name, 0)
        lines.append(
            f"Feature: {name}\tSupportedMinVersion: {level_to_string(name, low)}\t"
            f"SupportedMaxVersion: {level_to_string(name, high)}\t"
            f"FinalizedVersionLevel: {level_to_string(name, finalized)}\tEpoch: {epoch}"
        )
    return "\n".join(lines)


def describe_json(meta: FeatureMetadata) -> dict[str, Any]:
    return {
        "finalizedFeaturesEpoch": meta.epoch,
        "features": [
            {
                "name": name,
                "supportedMinVersion": meta.supported[name][0],
                "supportedMaxVersion": meta.supported[name][1],
                "finalizedVersionLevel": meta.finalized.get(name, 0),
            }
            for name in sorted(meta.supported)
        ],
    }


def parse_name_and_level(text: str) -> tuple[str, int]:
    """``NAME=LEVEL`` with Kafka's messages (``FeatureCommand.parseNameAndLevel``).

    Raises:
        UsageError: no ``=``, or a level that is not a 16-bit integer.
    """
    name, sep, level_text = text.partition("=")
    if not sep:
        raise UsageError(f"Can't parse feature=level string {text}: equals sign not found.")
    name, level_text = name.strip(), level_text.strip()
    try:
        level = int(level_text)
    except ValueError:
        level = None
    if level is None or not _SHORT_MIN <= level <= _SHORT_MAX:
        raise UsageError(f"Can't parse feature=level string {text}: unable to parse {level_text} as a short.")
    if not name:
        raise UsageError(f"Can't parse feature=level string {text}: the feature name is empty.")
    return name, level


def _supported_releases() -> str:
    low, high = MINIMUM_BOOTSTRAP_METADATA_VERSION, LATEST_METADATA_VERSION
    return ", ".join(m.release for m in MetadataVersion if low <= m <= high)


def _release(text: str) -> MetadataVersion:
    try:
        return parse_release_version(text)
    except ValueError:
        raise UsageError(
            f"Unknown metadata.version {text}. Supported metadata.version are {_supported_releases()}"
        ) from None


def build_updates(ns: argparse.Namespace, out: TextIO) -> tuple[str, dict[str, tuple[int, int]]]:
    """(operation, {feature: (level, upgrade type)}) for upgrade, downgrade or disable.

    Raises:
        UsageError: as ``FeatureCommand`` refuses the arguments.
    """
    op: str = ns.command
    if op == "upgrade":
        kind = UPGRADE
    else:
        kind = UNSAFE_DOWNGRADE if ns.unsafe else SAFE_DOWNGRADE
    updates: dict[str, tuple[int, int]] = {}
    if op == "disable":
        for name in ns.feature or ():
            if name in updates:
                raise UsageError(f"Feature {name} was specified more than once.")
            updates[name] = (0, kind)
    elif ns.release_version is not None:
        if ns.metadata is not None or ns.feature:
            raise UsageError("Can not specify `release-version` with other feature flags.")
        mv = _release(ns.release_version)
        for name, level in sorted(default_features(int(mv)).items()):
            # Don't send a request to upgrade a feature to 0 (Kafka's rule).
            if kind != UPGRADE or level > 0:
                updates[name] = (level, kind)
    else:
        if ns.metadata is not None:
            print(" `metadata` flag is deprecated and may be removed in a future release.", file=out)
            updates[METADATA_VERSION] = (int(_release(ns.metadata)), kind)
        for text in ns.feature or ():
            name, level = parse_name_and_level(text)
            if name in updates:
                raise UsageError(f"Feature {name} was specified more than once.")
            updates[name] = (level, kind)
    if not updates:
        raise UsageError(f"You must specify at least one feature to {op}")
    return op, updates


def format_update_results(
    op: str,
    updates: dict[str, tuple[int, int]],
    results: dict[str, tuple[int, str] | None],
    dry_run: bool,
) -> tuple[list[str], int]:
    """Kafka's per-feature lines, sorted by feature, and the number of failures."""
    lines: list[str] = []
    failures = 0
    for name in sorted(results):
        level = updates[name][0]
        outcome = results[name]
        if outcome is not None:
            helper = "Can not " if dry_run else "Could not "
            suffix = f"disable {name}" if op == "disable" else f"{op} {name} to {level}"
            lines.append(f"{helper}{suffix}. {outcome[1]}")
            failures += 1
        else:
            verb = " can be " if dry_run else " was "
            obj = "disabled." if op == "disable" else f"{op}d to {level}."
            lines.append(f"{name}{verb}{obj}")
    return lines, failures


# ---------------------------------------------------------------------------------------------------
# main


def _run(ns: argparse.Namespace, client_factory: ClientFactory, out: TextIO) -> None:
    check_timeouts(ns)
    if ns.command == "describe":
        meta = client_factory(ns).describe_features()
        if ns.json:
            print(json.dumps(describe_json(meta), indent=2), file=out)
        else:
            text = format_describe(meta)
            if text:
                print(text, file=out)
        return
    op, updates = build_updates(ns, out)
    results = client_factory(ns).update_features(updates, validate_only=ns.dry_run)
    lines, failures = format_update_results(op, updates, results, ns.dry_run)
    for line in lines:
        print(line, file=out)
    if failures:
        raise _Failed(f"{failures} out of {len(updates)} operation(s) failed.")


def _execute(ns: argparse.Namespace, client_factory: ClientFactory, out: TextIO, err: TextIO) -> int:
    try:
        _run(ns, client_factory, out)
    except _Failed as e:
        print(str(e), file=err)
        return 1
    except AdminError as e:
        print(f"{PROG}: {e}", file=err)
        return 1
    return 0


def main(
    argv: Sequence[str] | None = None,
    *,
    out: TextIO | None = None,
    err: TextIO | None = None,
    client_factory: ClientFactory = admin_client_from_args,
) -> int:
    return run_tool(
        PROG, build_parser(), argv, out, err, lambda ns, out, err: _execute(ns, client_factory, out, err)
    )


if __name__ == "__main__":
    sys.exit(main())
