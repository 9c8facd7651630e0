"""k8s.io/utils/cpuset: Parse (with its errors) and the canonical String()."""
import pytest
from hypothesis import given, strategies as st

from kubeinputs.cpuset import MAX_CPU_ID, CPUSet, CPUSetError, cpuset_string
from kubeinputs.limits import WorkLimitError


@pytest.mark.parametrize("text,ids,canonical", [
    ("", [], ""),
    ("0", [0], "0"),
    ("0-3,8,10-11", [0, 1, 2, 3, 8, 10, 11], "0-3,8,10-11"),
    ("1-1", [1], "1"),
    ("5,3,4", [3, 4, 5], "3-5"),
    ("0-2,1-4", [0, 1, 2, 3, 4], "0-4"),
    ("+3", [3], "3"),
    ("7,0-1,3", [0, 1, 3, 7], "0-1,3,7"),
], ids=lambda v: repr(v) if isinstance(v, str) else None)
def test_parse(text, ids, canonical):
    cpus = CPUSet.parse(text)
    assert cpus.list() == ids and str(cpus) == canonical


@pytest.mark.parametrize("text,message", [
    ("x", 'strconv.Atoi: parsing "x": invalid syntax'),
    ("1-", 'strconv.Atoi: parsing "": invalid syntax'),
    ("-1", 'strconv.Atoi: parsing "": invalid syntax'),
    ("3-1", 'invalid range "3-1" (3 > 1)'),
    (" 1", 'strconv.Atoi: parsing " 1": invalid syntax'),
    ("1,,2", 'strconv.Atoi: parsing "": invalid syntax'),
    ("0x1", 'strconv.Atoi: parsing "0x1": invalid syntax'),
    ("99999999999999999999", 'strconv.Atoi: parsing "99999999999999999999": value out of range'),
    ("1_0", 'strconv.Atoi: parsing "1_0": invalid syntax'),
])
def test_parse_errors(text, message):
    with pytest.raises(CPUSetError) as err:
        CPUSet.parse(text)
    assert str(err.value) == message


def test_parse_refuses_ids_past_the_bound_instead_of_building_them():
    with pytest.raises(WorkLimitError, match="kubelet would build a set that large"):
        CPUSet.parse(f"0-{MAX_CPU_ID + 1}")


def test_set_operations():
    a, b = CPUSet.parse("0-5"), CPUSet.parse("4-7")
    assert str(a.union(b)) == "0-7" and str(a.intersection(b)) == "4-5" and str(a.difference(b)) == "0-3"
    assert CPUSet.parse("1-2").is_subset_of(a) and not b.is_subset_of(a) and a.is_superset_of(CPUSet.new(0))
    assert a.size() == 6 and not a.is_empty() and CPUSet().is_empty() and a.contains(5) and not a.contains(6)


@given(st.sets(st.integers(0, 300), max_size=40))
def test_string_round_trips(ids):
    text = cpuset_string(ids)
    assert CPUSet.parse(text).list() == sorted(ids)
    assert str(CPUSet.parse(text)) == text
