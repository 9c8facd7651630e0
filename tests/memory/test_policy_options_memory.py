"""memoryManagerPolicyOptions: the `memory-drift-tolerance` option (KEP-6232, final iteration texts)."""
from __future__ import annotations

import pytest

from memorymanager.memory_drift import MEMORY_DRIFT_GRACE_BYTES
from memorymanager.policy import MemoryManagerError
from memorymanager.policy_options import PolicyOptions, check_policy_option_available, new_policy_options
from tests.helpers.memory import MB, gates

GATE_ON = gates(MemoryManagerDriftTolerance=True)
GATE_OFF = gates()


@pytest.fixture
def iomem(tmp_path):
    path = tmp_path / "iomem"
    path.write_text("  1000000-1ffffff : Kernel code\n  2000000-27fffff : Kernel data\n")
    return str(path)


@pytest.mark.parametrize(
    "gate, options, want",
    [
        (GATE_OFF, None, 0),
        (GATE_ON, None, 0),
        (GATE_ON, {}, 0),
        (GATE_ON, {"memory-drift-tolerance": "off"}, 0),
        (GATE_ON, {"memory-drift-tolerance": "128Mi"}, 128 * MB),
        (GATE_ON, {"memory-drift-tolerance": "0"}, 0),
        (GATE_ON, {"memory-drift-tolerance": "1.5"}, 2),  # Quantity.Value() rounds up
    ],
    ids=["no options, gate off", "no options", "empty", "off", "quantity", "zero", "fraction"],
)
def test_new_policy_options(gate, options, want, iomem):
    assert new_policy_options(options, gate, iomem) == PolicyOptions(max_memory_drift=want)


def test_auto_uses_the_kernel_image_size_plus_grace(iomem, tmp_path):
    got = new_policy_options({"memory-drift-tolerance": "auto"}, GATE_ON, iomem)
    assert got.max_memory_drift == 0x2800000 - 0x1000000 + MEMORY_DRIFT_GRACE_BYTES
    # unreadable /proc/iomem: tolerance stays off
    missing = new_policy_options({"memory-drift-tolerance": "auto"}, GATE_ON, str(tmp_path / "nope"))
    assert missing.max_memory_drift == 0


@pytest.mark.parametrize(
    "gate, options, message",
    [
        (
            GATE_OFF,
            {"memory-drift-tolerance": "off"},
            'memory manager policy option "memory-drift-tolerance" requires the MemoryManagerDriftTolerance feature gate',
        ),
        (GATE_ON, {"memory-drift-tolerance": "-1Mi"}, 'bad value for option "memory-drift-tolerance": "-1Mi" is negative'),
        (GATE_ON, {"no-such-option": "true"}, 'unknown Memory Manager Policy option: "no-such-option"'),
        (GATE_OFF, {"no-such-option": "true"}, 'unknown Memory Manager Policy option: "no-such-option"'),
    ],
)
def test_policy_option_errors(gate, options, message, iomem):
    with pytest.raises(MemoryManagerError) as err:
        new_policy_options(options, gate, iomem)
    assert str(err.value) == message


def test_unparsable_quantity_carries_the_parse_error(iomem):
    with pytest.raises(MemoryManagerError) as err:
        new_policy_options({"memory-drift-tolerance": "lots"}, GATE_ON, iomem)
    text = str(err.value)
    assert text.startswith('bad value for option "memory-drift-tolerance": ')
    assert "quantities must match the regular expression" in text


def test_check_policy_option_available():
    check_policy_option_available("memory-drift-tolerance", GATE_ON)
    with pytest.raises(MemoryManagerError, match="requires the MemoryManagerDriftTolerance feature gate"):
        check_policy_option_available("memory-drift-tolerance", GATE_OFF)
