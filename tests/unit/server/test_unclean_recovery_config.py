"""The unclean recovery properties (KIP-966's names) reach the controller; bad values name the key."""

from __future__ import annotations

import pytest

from kraft.common.errors import ConfigError
from kraft.controller.unclean_recovery import UncleanRecoveryStrategy
from kraft.server.config import parse_controller_config


def test_defaults_are_krafts_recovery_on_with_balanced_and_five_minutes() -> None:
    config = parse_controller_config({})
    assert config.unclean_recovery_manager_enabled is True
    assert config.unclean_recovery_strategy is UncleanRecoveryStrategy.BALANCED
    assert config.unclean_recovery_timeout_ms == 300_000


def test_each_property_is_read() -> None:
    config = parse_controller_config(
        {
            "unclean.recovery.manager.enabled": "false",
            "unclean.recovery.strategy": "aggressive",  # case does not matter
            "unclean.recovery.timeout.ms": "60000",
        }
    )
    assert config.unclean_recovery_manager_enabled is False
    assert config.unclean_recovery_strategy is UncleanRecoveryStrategy.AGGRESSIVE
    assert config.unclean_recovery_timeout_ms == 60_000
    assert parse_controller_config({"unclean.recovery.strategy": "None"}).unclean_recovery_strategy is (
        UncleanRecoveryStrategy.NONE
    )


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("unclean.recovery.strategy", "Manual"),
        ("unclean.recovery.timeout.ms", "0"),
        ("unclean.recovery.manager.enabled", "maybe"),
    ],
)
def test_a_bad_value_names_its_property(key: str, value: str) -> None:
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        parse_controller_config({key: value})
