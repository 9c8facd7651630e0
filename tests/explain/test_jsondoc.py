"""The JSON document: every field documented in docs/explain.md is there, and nothing else."""
from __future__ import annotations

import json
import re
from dataclasses import fields

from memorymanager.explain import model
from memorymanager.explain.jsondoc import scenario_document
from tests.explain.helpers import ROOT, walk

DOC = (ROOT / "docs" / "explain.md").read_text(encoding="utf-8")


def documented_tables() -> dict[str, list[str]]:
    """Section heading -> the field names of its table."""
    tables: dict[str, list[str]] = {}
    current = None
    for line in DOC.splitlines():
        heading = re.match(r"### `?([A-Za-z ]+?)`?$", line)
        if heading:
            current = heading.group(1)
            tables[current] = []
        elif current and (m := re.match(r"\| `([a-z_]+)` \|", line)):
            tables[current].append(m.group(1))
    return tables


def test_every_model_class_is_documented_field_by_field() -> None:
    tables = documented_tables()
    for name in ("StepView", "Explanation", "Asked", "ContainerAsk", "PodPart", "HintsPart", "MaskRow",
                 "MergePart", "ProviderList", "Rival", "Decision", "AllocationPart", "ContainerAllocation", "Take",
                 "AllocatableTerms", "CPUNodeRow", "CPUHintsPart", "CPUMaskRow", "CPUAllocation", "CPUTakeRow",
                 "DeviceInventory", "DeviceInfo", "DeviceHintsPart", "DeviceMaskRow", "DeviceAllocation", "DevicePick",
                 "WhatIf", "MaskShortfall", "CPUShortfall", "DeviceShortfall"):
        cls = getattr(model, name)
        assert tables[name] == [f.name for f in fields(cls)], name


def _keys_of(obj: object, found: dict[str, set[str]], kind: str) -> None:
    found.setdefault(kind, set()).update(obj.keys())


def test_document_has_the_documented_keys() -> None:
    tables = documented_tables()
    view = walk("tutorial/004-init-memory-reused.yaml")
    doc = json.loads(json.dumps(scenario_document(view)))
    assert list(doc) == tables["Scenario document"]
    assert doc["schema_version"] == model.SCHEMA_VERSION
    step = doc["steps"][0]
    assert list(step) == tables["StepView"]
    e = step["explanation"]
    assert list(e) == tables["Explanation"]
    assert list(e["asked"]) == tables["Asked"]
    assert list(e["allocatable"][0]) == tables["AllocatableTerms"]
    assert list(e["hints"][0]) == tables["HintsPart"]
    assert list(e["hints"][0]["masks"][0]) == tables["MaskRow"]
    assert list(e["merges"][0]) == tables["MergePart"]
    assert list(e["merges"][0]["lists"][0]) == tables["ProviderList"]
    assert list(e["decision"]) == tables["Decision"]
    assert list(e["allocation"]) == tables["AllocationPart"]
    assert list(e["allocation"]["containers"][0]) == tables["ContainerAllocation"]
    assert list(e["allocation"]["containers"][0]["taken"][0]) == tables["Take"]
    assert e["allocation"]["containers"][1]["reused"] == {"memory": 2 << 30}


def test_cpu_and_device_parts_have_the_documented_keys() -> None:
    tables = documented_tables()
    view = walk("devices/034-dual-socket-cpu-memory-gpu-aligned.yaml")
    e = json.loads(json.dumps(scenario_document(view)))["steps"][0]["explanation"]
    assert list(e["cpu_nodes"][0]) == tables["CPUNodeRow"]
    assert list(e["cpu_hints"][0]) == tables["CPUHintsPart"]
    assert list(e["cpu_hints"][0]["masks"][0]) == tables["CPUMaskRow"]
    assert list(e["cpu_allocation"][0]) == tables["CPUAllocation"]
    assert list(e["cpu_allocation"][0]["steps"][0]) == tables["CPUTakeRow"]
    assert list(e["devices"][0]) == tables["DeviceInventory"]
    assert list(e["devices"][0]["devices"][0]) == tables["DeviceInfo"]
    assert list(e["device_hints"][0]) == tables["DeviceHintsPart"]
    assert list(e["device_hints"][0]["masks"][0]) == tables["DeviceMaskRow"]
    assert list(e["device_allocation"][0]) == tables["DeviceAllocation"]
    assert list(e["device_allocation"][0]["picks"][0]) == tables["DevicePick"]
    assert [lst["provider"] for lst in e["merges"][0]["lists"]] == ["device manager", "CPU manager", "memory manager"]


def test_only_step_document() -> None:
    view = walk("tutorial/001-single-node-fit.yaml")
    doc = scenario_document(view, 1)
    assert [s["index"] for s in doc["steps"]] == [1]
    assert doc["steps"][0]["explanation"]["merges"][0]["winner"] == {"numaAffinity": [1], "preferred": True}


def test_start_document_has_the_documented_keys() -> None:
    from memorymanager.explain.jsondoc import start_document
    from memorymanager.explain.start import start_of_scenario
    from memorymanager.node import cpu_start, reservation, start_diagnosis, whatif, whatif_cpu, whatif_devices

    tables = documented_tables()
    for cls in (start_diagnosis.StartDiagnosis, reservation.ReservationSum, start_diagnosis.StateDrift,
                start_diagnosis.StartFix, cpu_start.CPUStart, cpu_start.DeviceCheckpointFacts, whatif.RemovalFix,
                whatif_cpu.CPUFit, whatif_cpu.ConfigTry, whatif_devices.DeviceFit):
        assert tables[cls.__name__] == [f.name for f in fields(cls)], cls.__name__
    path = "fixtures/scenarios/tutorial/008-checkpoint-after-a-reboot.yaml"
    doc = json.loads(json.dumps(start_document({"scenario": path}, start_of_scenario(str(ROOT / path)))))
    assert list(doc) == tables["Start document"]
    assert list(doc["start"]) == tables["StartDiagnosis"]
    assert list(doc["start"]["reservations"][0]) == tables["ReservationSum"]
    assert list(doc["start"]["drift"][0]) == tables["StateDrift"]
    assert list(doc["start"]["fixes"][0]) == tables["StartFix"]


def test_what_if_document_has_the_documented_keys() -> None:
    from memorymanager.explain.walk import walk_scenario
    from memorymanager.node import api, whatif
    from memorymanager.runner.scenario import load_scenario

    tables = documented_tables()
    for cls in (model.WhatIf, model.MaskShortfall, whatif.RemovalFix, whatif.SettingTry, whatif.LargestFit,
                whatif.NodeHeadroom, api.Admission, api.Placement):
        assert tables[cls.__name__] == [f.name for f in fields(cls)], cls.__name__
    view = walk_scenario(load_scenario(str(ROOT / "fixtures/scenarios/tutorial/006-what-would-make-it-fit.yaml")),
                         what_if=True)
    docs = [json.loads(json.dumps(scenario_document(view, i)))["steps"][0]["explanation"] for i in (1, 2)]
    admitted, refused = docs[0]["what_if"], docs[1]["what_if"]
    # a memory-only node: the fields about CPUs and devices are left out
    assert list(refused) == _without_omitted(tables["WhatIf"], model.WhatIf)
    assert list(admitted["headroom"][0]) == tables["NodeHeadroom"]
    assert list(refused["shortfalls"][0]) == tables["MaskShortfall"]
    assert list(refused["removals"][0]) == tables["RemovalFix"]
    assert list(refused["removals"][0]["admission"]) == tables["Admission"]
    assert list(refused["removals"][0]["admission"]["placements"]["app"]) == _without_omitted(tables["Placement"],
                                                                                               api.Placement)
    assert list(refused["settings"][0]) == tables["SettingTry"]
    assert list(refused["largest"]) == tables["LargestFit"]
    assert json.loads(json.dumps(scenario_document(walk("tutorial/001-single-node-fit.yaml"))))["steps"][0][
        "explanation"]["what_if"] is None  # only when asked for


def _without_omitted(names: list[str], cls: type) -> list[str]:
    """The documented fields of `cls` without those left out of the JSON while None (`omit_none`)."""
    omitted = {f.name for f in fields(cls) if f.metadata.get("omit_none")}
    assert omitted, cls.__name__  # the test below needs a class that has such fields
    return [n for n in names if n not in omitted]


def test_cpu_and_device_fields_are_written_when_the_node_models_them() -> None:
    """On a node with a CPU manager and devices, part 1 and part 6 write the fields memory-only nodes leave out."""
    from memorymanager.explain.walk import walk_scenario
    from memorymanager.runner.scenario import load_scenario

    tables = documented_tables()
    view = walk_scenario(load_scenario(str(ROOT / "fixtures/scenarios/tutorial/009-cpus-on-one-node-memory-on-the-other"
                                                   ".yaml")), what_if=True)
    e = json.loads(json.dumps(scenario_document(view, 2)))["steps"][0]["explanation"]
    assert list(e["asked"]["containers"][0]) == tables["ContainerAsk"]
    assert e["asked"]["containers"][0]["exclusive_cpus"] == 4 and e["asked"]["containers"][0]["cpu"] == "4"
    assert list(e["what_if"]) == tables["WhatIf"]
    assert e["what_if"]["limited_by"] == []
    assert e["what_if"]["provider_fits"] == [
        {"provider": "CPU manager", "resource": "cpu", "masks": [[0]]},
        {"provider": "memory manager", "resource": "memory", "masks": [[1]]}]
    placement = e["what_if"]["settings"][0]["admission"]["placements"]["app"]
    assert list(placement) == [n for n in tables["Placement"] if n != "device_numa_nodes"]  # no devices here
    assert placement["cpu_numa_nodes"] == [0] and placement["cpuset_mems"] == "1"
