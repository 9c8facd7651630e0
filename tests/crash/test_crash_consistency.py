"""SIGKILL at every boundary of a durable write never leaves a file that does not load, nor one that
loses or invents a write (CI: every boundary of the first 4 writes and 12 drawn from the first 40, per
target; the long run is python -m tests.crash --kills 1000). The kill points are chosen, not timed:
the result does not depend on the machine's speed or load."""
import pytest

from tests.crash.kill import BOUNDARIES, TARGETS, kill_points, run

CI_POINTS = kill_points(4) + [p for p in kill_points(40, 12, seed=7) if p >= 4 * len(BOUNDARIES)]


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_every_kill_leaves_exactly_the_state_before_or_after_the_write(target):
    report = run(target, CI_POINTS)
    assert report.failures == []
    assert report.survived == report.kills == len(CI_POINTS)
    assert set(report.kinds) == set(BOUNDARIES)  # every boundary of a write was a kill point
    assert report.mid_write == sum(n for kind, n in report.kinds.items() if kind != "fsync_dir")


def test_a_kill_point_is_deterministic(tmp_path):
    """The same kill point gives the same outcome: what was finished, where it stopped, what is on disk."""
    from tests.crash.kill import kill_at

    outcomes = []
    for attempt in range(2):
        folder = tmp_path / str(attempt)
        folder.mkdir()
        outcomes.append(kill_at(TARGETS["checkpoint"], str(folder), 3 * len(BOUNDARIES) + 5))
    assert outcomes[0] == outcomes[1] == (3, "rename", {"pod-00000": 1 << 20, "pod-00001": 2 << 20})
