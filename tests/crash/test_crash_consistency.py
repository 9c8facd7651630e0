"""SIGKILL at every boundary of a durable write never leaves a file that does not load, nor one that
loses or invents a write (CI: every boundary of the first 4 writes and 12 drawn from the first 40, per
target; the long run is python -m tests.crash --kills 1000). The kill points are chosen, not timed:
the result does not depend on the machine's speed or load. The serve host is killed at chosen file
calls too (tests/crash/serve_kills.py; the long run is python -m tests.crash --serve)."""
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.crash.kill import BOUNDARIES, TARGETS, kill_points, run
from tests.crash.serve_kills import Ledger, check, killed_run, scripts

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


SERVE_STEP = 12  # every 12th of the ~100 kill points in CI; python -m tests.crash --serve takes them all


def test_serve_killed_at_any_file_call_restarts_with_podresources_equal_to_the_checkpoint():
    from tests.crash.serve_kills import run as run_serve

    result = run_serve(step=SERVE_STEP)
    assert result.failures == []
    assert result.kill_points >= 8 and result.restarts == 2 * result.kill_points


def test_only_the_writers_temporary_files_are_removed(tmp_path):
    from state.checkpoint_manager import FileOps, remove_temp_files, write_file

    class Cut(FileOps):
        def rename(self, src, dst):
            raise KeyboardInterrupt  # a write cut before its rename, as a kill leaves it

    try:
        write_file(Cut(), str(tmp_path / "memory_manager_state"), b"{}")
    except KeyboardInterrupt:
        pass
    import tempfile

    fd, left = tempfile.mkstemp(prefix=".", dir=tmp_path)  # what a killed writer leaves
    os.close(fd)
    for keep in (".hidden", ".abcdefghi", "served_pods.json", ".abc-efgh"):
        (tmp_path / keep).write_text("x")
    (tmp_path / ".abcdefgh").mkdir()
    assert remove_temp_files(str(tmp_path)) == [os.path.basename(left)]
    assert sorted(os.listdir(tmp_path)) == [".abc-efgh", ".abcdefgh", ".abcdefghi", ".hidden", "served_pods.json"]


@settings(max_examples=8, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(script=scripts(), at=st.integers(min_value=1, max_value=160))
def test_any_script_killed_at_any_file_call_restarts_consistent_and_conserving(script, at, tmp_path_factory):
    """Issue 18 item 2 as a property: random Admit/Remove scripts, killed at a random file call."""
    folder = str(tmp_path_factory.mktemp("kill"))
    ledger = Ledger()
    ledger.replay(script, killed_run(folder, script, at))
    assert check(folder, ledger) == []
