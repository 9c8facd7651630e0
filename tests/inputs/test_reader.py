"""kubeinputs.reader: the one reader of YAML and JSON files, strict about duplicate keys."""
import json
import textwrap

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from kubeinputs import reader
from kubeinputs.errors import InputError
from kubeinputs.kubelet_config import load_kubelet_config_file
from kubeinputs.machine import load_machine_info
from kubeinputs.pod import load_pod_file
from memorymanager.runner.scenario import ScenarioError, load_scenario
from tests.helpers.scenarios import TWO_NODE_MACHINE

POD_YAML = textwrap.dedent("""\
    metadata: {name: web}
    spec:
      containers:
      - name: app
        resources:
          limits: {cpu: "1", memory: 1Gi}
          limits: {cpu: "2", memory: 2Gi}
""")
KUBELET_YAML = textwrap.dedent("""\
    apiVersion: kubelet.config.k8s.io/v1beta1
    kind: KubeletConfiguration
    memoryManagerPolicy: Static
    reservedMemory:
    - numaNode: 0
      limits: {memory: 1Gi, memory: 2Gi}
""")
MACHINE_JSON = """{
  "num_cores": 2,
  "topology": [
    {"node_id": 0, "memory": 4294967296},
    {"node_id": 1, "memory": 4294967296, "memory": 1}
  ]
}
"""


def refused(load, path):
    with pytest.raises(InputError) as info:
        load(path)
    return info.value


# -- duplicate keys in every kind of referenced file ---------------------------------------------------------
@pytest.mark.parametrize(
    "name, text, load, where, reason",
    [
        ("pod.yaml", POD_YAML, load_pod_file, "spec.containers[0].resources.limits",
         "found duplicate key 'limits' at line 7, column 7 (first at line 6, column 7)"),
        ("kubelet.yaml", KUBELET_YAML, load_kubelet_config_file, "reservedMemory[0].limits.memory",
         "found duplicate key 'memory' at line 6, column 25 (first at line 6, column 12)"),
        ("machine.json", MACHINE_JSON, load_machine_info, "topology[1].memory",
         "found duplicate key 'memory' at line 5, column 42 (first at line 5, column 20)"),
    ],
)
def test_duplicate_key_in_a_referenced_file_is_refused(tmp_path, name, text, load, where, reason):
    """Pod, KubeletConfiguration and MachineInfo files: file, path, line and reason (no silent last-wins)."""
    path = tmp_path / name
    path.write_text(text)
    err = refused(load, path)
    assert (err.file, err.where, err.reason) == (str(path), where, reason)
    assert str(err) == f"{path}: {where}: {reason}"


def test_a_scenario_names_the_referenced_file_and_the_place_in_it(tmp_path):
    (tmp_path / "pod.yaml").write_text(POD_YAML)
    (tmp_path / "machine.json").write_text(MACHINE_JSON)
    (tmp_path / "kubelet.yaml").write_text(KUBELET_YAML)
    cases = {
        "pod": ({"machine": TWO_NODE_MACHINE, "steps": [{"admit": "pod.yaml"}]}, "steps[0].admit", "pod.yaml",
                "spec.containers[0].resources.limits: found duplicate key 'limits' at line 7"),
        "machine": ({"machine": "machine.json", "steps": [{"check": {}}]}, "machine", "machine.json",
                    "topology[1].memory: found duplicate key 'memory' at line 5"),
        "kubelet": ({"machine": TWO_NODE_MACHINE, "kubelet": "kubelet.yaml", "steps": [{"check": {}}]}, "kubelet",
                    "kubelet.yaml", "reservedMemory[0].limits.memory: found duplicate key 'memory' at line 6"),
    }
    for name, (doc, where, file, reason) in cases.items():
        scenario = tmp_path / f"scenario-{name}.yaml"
        scenario.write_text(json.dumps(doc))
        with pytest.raises(ScenarioError) as info:
            load_scenario(str(scenario))
        err = info.value
        assert (err.file, err.where) == (str(scenario), where), name
        assert err.reason.startswith(f"{tmp_path / file}: {reason}"), (name, err.reason)


# -- YAML --------------------------------------------------------------------------------------------------
def test_yaml_values_are_the_safe_loaders():
    text = textwrap.dedent("""\
        base: &b {x: 1, y: [1, 2.5, null, true, "s", 0o17, 2024-01-02]}
        alias: *b
        merged: {<<: *b, z: 3}
        set: !!set {a, b}
        empty:
    """)
    assert reader.load_yaml_text(text) == yaml.safe_load(text)
    doc = reader.load_yaml_text(text)
    assert doc["alias"] is doc["base"]


def test_yaml_recursive_alias_terminates():
    doc = reader.load_yaml_text("a: &x [1, *x]\n")
    assert doc["a"][1] is doc["a"]


@pytest.mark.parametrize(
    "text, where, reason",
    [
        ("a: [1,\n", "(document)", "not valid YAML: line 2, column 1: did not find expected node content"),
        ("a: 1\n---\nb: 2\n", "(document)", "2 YAML documents (separated by ---) where one is expected"),
        ("a: 1\n---\nb: 2\n---\nc: [\n", "(document)", "3 YAML documents (separated by ---) where one is expected"),
        ("a:\n\tb: 1\n", "(document)", "not valid YAML: line 2, column 1: found character that cannot start any "
                                          "token (a tab in the indentation: YAML indents with spaces, never tabs)"),
        ("a:\n  b:\n  \t c: 1\n", "(document)", "not valid YAML: line 3, column 3: found character that cannot start "
                                                 "any token (a tab in the indentation: YAML indents with spaces, never tabs)"),
        ("a: !foo 1\n", "a", "not valid YAML: line 1, column 4: could not determine a constructor for the tag '!foo'"),
        ("? [1]\n: x\n", "(document)", "not valid YAML: line 1, column 3: found an unhashable key"),
        ("a:\n  b: 1\n  c: 2\n  b: 3\n", "a.b", "found duplicate key 'b' at line 4, column 3 (first at line 2, column 3)"),
        ("- {x: 1}\n- {x: 1, x: 2}\n", "[1].x", "found duplicate key 'x' at line 2, column 10 (first at line 2, column 4)"),
        # scalars YAML 1.1 types by their looks that PyYAML then cannot build (it raised a bare ValueError)
        ("a: 0x_\n", "a", "not valid YAML: line 1, column 4: '0x_' cannot be read as an integer: invalid literal "
                         "for int() with base 16: '' (quote it to keep it a string)"),
        ("a:\n  b: 2020-13-45\n", "a.b", "not valid YAML: line 2, column 6: '2020-13-45' cannot be read as a date or "
                                       "timestamp: month must be in 1..12 (quote it to keep it a string)"),
        ("- [1, -0b_]\n", "[0][1]", "not valid YAML: line 1, column 7: '-0b_' cannot be read as an integer"),
        ("0x_: 1\n", "(document)", "not valid YAML: line 1, column 1: '0x_' cannot be read as an integer"),
        ("2020-02-30\n", "(document)", "not valid YAML: line 1, column 1: '2020-02-30' cannot be read as a date or "
                                       "timestamp: day is out of range for month (quote it to keep it a string)"),
        ("a: &d 2020-13-45\nb: *d\n", "a", "not valid YAML: line 1, column 4: '2020-13-45' cannot be read as a date"),
        # an explicit tag on a value that is not of its type: no advice to quote (quoting keeps the tag)
        ("a: !!int '0x_'\n", "a", "not valid YAML: line 1, column 4: '0x_' cannot be read as an integer: invalid "
                                  "literal for int() with base 16: ''"),
        ("a: !!bool maybe\n", "a", "not valid YAML: line 1, column 4: 'maybe' cannot be read as a boolean"),
        ("a: !!int ''\n", "a", "not valid YAML: line 1, column 4: '' cannot be read as an integer"),
        ("a: !!timestamp soon\n", "a", "not valid YAML: line 1, column 4: 'soon' cannot be read as a date or timestamp"),
        ("a: !!set {0x_: null}\n", "a", "not valid YAML: line 1, column 4: cannot build !!set: invalid literal"),
        ("- !!omap [1]\n", "[0]", "not valid YAML: line 1, column 11: expected a mapping of length 1, but found scalar"),
    ],
)
def test_yaml_errors(text, where, reason):
    with pytest.raises(InputError) as info:
        reader.load_yaml_text(text)
    assert info.value.where == where
    assert info.value.reason.startswith(reason), info.value.reason
    if text.endswith("0x_\n"):
        assert info.value.reason.endswith("(quote it to keep it a string)") is ("!!" not in text)


def test_a_value_pyyaml_cannot_build_names_the_file_and_the_place(tmp_path):
    """A pod file with `memory: 0x_`, a scenario with `name: 2020-13-45`: file, path, line, reason."""
    pod = tmp_path / "pod.yaml"
    pod.write_text(POD_YAML.replace("limits: {cpu: \"2\", memory: 2Gi}\n", "").replace("memory: 1Gi", "memory: 0x_"))
    err = refused(load_pod_file, pod)
    assert (err.file, err.where) == (str(pod), "spec.containers[0].resources.limits.memory")
    assert err.reason.startswith("not valid YAML: line 6, column 34: '0x_' cannot be read as an integer")
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text("name: 2020-13-45\nmachine: x.json\nsteps: []\n")
    with pytest.raises(ScenarioError) as info:
        load_scenario(str(scenario))
    assert (info.value.file, info.value.where) == (str(scenario), "name")
    assert "'2020-13-45' cannot be read as a date or timestamp: month must be in 1..12" in info.value.reason


def test_the_pure_python_loader_gives_the_same(monkeypatch):
    text = "a: {b: [1, 2], c: x}\nd: {e: 1, e: 2}\n"
    with pytest.raises(InputError) as fast:
        reader.load_yaml_text(text)
    monkeypatch.setattr(reader, "_loader_class", lambda: yaml.SafeLoader)
    with pytest.raises(InputError) as pure:
        reader.load_yaml_text(text)
    assert (fast.value.where, fast.value.reason) == (pure.value.where, pure.value.reason)
    assert reader.load_yaml_text("a: {b: [1, 2], c: x}\n") == {"a": {"b": [1, 2], "c": "x"}}


def test_the_c_loader_is_used_when_pyyaml_has_it():
    if not getattr(yaml, "__with_libyaml__", False):
        pytest.skip("PyYAML without libyaml")
    assert reader._loader_class() is yaml.CSafeLoader


# -- YAML: the plain documents' event path against the node graph -------------------------------------------
def _outcome(load, text):
    """What a reader makes of `text`: ("value", repr), ("error", where, reason), or another exception."""
    try:
        return ("value", repr(load(text)))
    except InputError as exc:
        return ("error", exc.where, exc.reason)


PLAIN_DOCUMENTS = [
    "",
    "# only a comment\n",
    "---\n",
    "a: 1\n",
    "- 1\n- -2.5e3\n- 0x1F\n- 0o17\n- 1_000\n- 1:20\n- .inf\n- yes\n- Off\n- ~\n- null\n- ''\n",
    "a:\n  b:\n  - x: 'y'\n    z: \"w\"\n  - [1, {c: d}]\n  e: |\n    text\n",
    "1: a\n1.5: b\nfalse: c\n~: d\n",
    "a: {b: [1, 2], c: x}\n",
    "key: value # comment\nother: 'quoted: yes'\n",
    "a: &x [1, {b: 2}]\nc: *x\nd: &s text\n*s : e\n",  # anchors and aliases (a key too)
]
NOT_PLAIN_DOCUMENTS = [
    "a: &x [1, *x]\n",                  # an alias inside its own anchor,
    "a: *nowhere\n",                    # to no anchor,
    "a: &x 1\nb: &x 2\n",              # an anchor defined twice
    "a: !!str 1\n",                     # tags
    "a: !foo 1\n",
    "s: !!set {a, b}\n",
    "a: 2024-01-02\n",                  # a timestamp
    "base: {x: 1}\nm: {<<: {y: 2}}\n",  # a merge key
    "=: a\n",                           # the value key
    "a: 0x_\n",                         # an int the safe loader cannot build
    "a: 1\na: 2\n",                    # problems: a duplicate key,
    "{1: a, true: b}\n",                # equal keys of two types,
    "? [1]\n: x\n",                    # a complex key,
    "a: [1,\n",                         # a syntax error,
    "a: 1\n---\nb: 2\n",              # two documents
]


@pytest.mark.parametrize("text", PLAIN_DOCUMENTS)
def test_a_plain_document_is_built_from_events_with_the_node_graphs_values(text):
    value = reader.load_plain_yaml(text)
    assert value is not reader.NOT_PLAIN
    assert repr(value) == repr(reader.load_yaml_graph(text)) == repr(yaml.safe_load(text))


def test_an_alias_shares_its_anchors_value_as_in_the_node_graph():
    text = "a: &x [1, {b: 2}]\nc: *x\n"
    for doc in (reader.load_plain_yaml(text), reader.load_yaml_graph(text)):
        assert doc["c"] is doc["a"]


@pytest.mark.parametrize("limit, refused", [(9, False), (8, True)])
def test_an_alias_counts_its_expanded_nodes(limit, refused):
    from kubeinputs.limits import Limits

    text = "a: &x [1, 2]\nb: *x\n"  # map, a, [1, 2] (3 nodes), b, the alias (3 more): 9 nodes
    low = Limits(max_yaml_nodes=limit)
    assert (reader.load_plain_yaml(text, low) is reader.NOT_PLAIN) == refused
    text_outcome = _outcome(lambda t: reader.load_yaml_text(t, limits=low), text)
    assert text_outcome == _outcome(lambda t: reader.load_yaml_graph(t, limits=low), text)
    assert (text_outcome[0] == "error") == refused


@pytest.mark.parametrize("text", NOT_PLAIN_DOCUMENTS)
def test_any_other_document_goes_through_the_node_graph(text):
    assert reader.load_plain_yaml(text) is reader.NOT_PLAIN
    assert _outcome(reader.load_yaml_text, text) == _outcome(reader.load_yaml_graph, text)


@pytest.mark.parametrize("name, value, text", [
    ("max_depth", 2, "a: {b: {c: 1}}\n"),
    ("max_yaml_nodes", 6, "a: [1, 2]\nb: 3\n"),
    ("max_number_digits", 4, "a: 12345\n"),
])
def test_the_limits_hold_on_plain_documents(name, value, text):
    from kubeinputs.limits import DEFAULT_LIMITS

    assert reader.load_plain_yaml(text) is not reader.NOT_PLAIN
    low = DEFAULT_LIMITS.raised([f"{name.replace('_', '-')}={value}"])
    assert reader.load_plain_yaml(text, low) is reader.NOT_PLAIN
    with pytest.raises(InputError) as info:
        reader.load_yaml_text(text, limits=low)
    assert name in info.value.reason
    assert reader.load_plain_yaml(text) is not reader.NOT_PLAIN  # the defaults are untouched


YAML_PIECES = ["a: 1", "a: 2", "b:", "  - x", "  - 1", "- y", "  c: yes", "  a: 1", "d: [1, {e: f}]", "g: {h: ~, h: 1}",
               "i: 'q'", "j: &k 1", "l: *k", "m: !!str 2", "y: &c [1, {z: *k}]", "  - *c", "w: *c", "&k v: 3", "n: 2024-01-01", "o: 0x1F", "p: .nan", "o: 0x_", "n: 2024-13-01", "<<: {q: 1}",
               "---", "? r", ": s", "\tt: 1", "u: [", "v: |", "    w", "x: 1_0", "1: z", "true: z", "  - - 1"]


@given(st.lists(st.sampled_from(YAML_PIECES), max_size=8))
@settings(max_examples=300, deadline=None)
def test_yaml_text_reads_any_document_as_the_node_graph_does(pieces):
    text = "\n".join(pieces) + "\n"
    assert _outcome(reader.load_yaml_text, text) == _outcome(reader.load_yaml_graph, text)


@given(st.recursive(st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False),
                              st.text(max_size=6), st.sampled_from(["yes", "0x1F", "1_000", "~", "", "1:20", "-.inf"])),
                    lambda inner: st.one_of(st.lists(inner, max_size=4),
                                            st.dictionaries(st.one_of(st.text(max_size=4), st.integers()), inner,
                                                            max_size=4)),
                    max_leaves=20),
       st.sampled_from([False, True, None]))
@settings(max_examples=150, deadline=None)
def test_dumped_documents_read_back_on_the_event_path(doc, flow):
    text = yaml.safe_dump(doc, default_flow_style=flow, allow_unicode=True)
    value = reader.load_plain_yaml(text)
    assert value is not reader.NOT_PLAIN
    assert value == reader.load_yaml_graph(text) == yaml.safe_load(text)


# -- JSON --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text, where, reason",
    [
        ('{"a": 1,\n "b": }', "(document)", "not valid JSON: line 2, column 7: Expecting value"),
        ('{"a": NaN}', "(document)", "not valid JSON: NaN is not a JSON value"),
        ('{"a": {"b": 1, "b": 2}}', "a.b", "found duplicate key 'b' at line 1, column 16 (first at line 1, column 8)"),
        ('\t{"a": 1, "a": 2}', "(document)", "found duplicate key 'a'"),  # YAML cannot place it: still refused
        ('{"a": "\\ud83d\\ude00", "a": 1}', "(document)", "found duplicate key 'a'"),
    ],
)
def test_json_errors(text, where, reason):
    with pytest.raises(InputError) as info:
        reader.load_json_text(text)
    assert (info.value.where, info.value.reason) == (where, reason)


def test_json_files_are_read_as_json(tmp_path):
    path = tmp_path / "doc.json"
    path.write_text('{"n": 1e3, "s": "\\u00e9"}')
    assert reader.load_file(path) == {"n": 1000.0, "s": "é"}  # YAML 1.1 would read 1e3 as a string
    path.write_text("{")
    err = refused(reader.load_file, path)
    assert (err.file, err.where) == (str(path), "(document)") and err.reason.startswith("not valid JSON: line 1")


def test_file_problems_name_the_file(tmp_path):
    err = refused(reader.load_file, tmp_path / "missing.yaml")
    assert str(err) == f"{tmp_path / 'missing.yaml'}: cannot read file: No such file or directory"
    path = tmp_path / "latin1.yaml"
    path.write_bytes(b"a: \xe9\n")
    err = refused(reader.load_file, path)
    assert err.file == str(path) and err.reason.startswith("not UTF-8 text")
