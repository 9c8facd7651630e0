"""SIGKILL at random moments never leaves a file that does not load, nor one that loses or invents
a write (CI: 100 kills per target; the long run is python -m tests.crash --kills 1000)."""
import pytest

from tests.crash.kill import TARGETS, run

CI_KILLS = 100


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_every_kill_leaves_the_state_before_or_after_the_write(target):
    report = run(target, CI_KILLS)
    assert report.failures == []
    assert report.survived == report.kills == CI_KILLS
    assert report.writes > CI_KILLS  # the kills land after some writes, not all before the first
