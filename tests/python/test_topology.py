"""rig.Machine against the rig command line: Machine.topo() equals `rig topo --json` on the
case fixtures (tests/pci/cases) and on this machine; Route equals `rig topo --why --json`."""
import json
import os
import pathlib
import subprocess

import pytest

import rig

RIG_TOOL = os.environ.get("RIG_TOOL", "rig")
CASE_TREES = pathlib.Path(os.environ.get("RIG_CASE_TREES", "/nonexistent"))


def rig_json(*args):
    out = subprocess.run([RIG_TOOL, *args, "--json"], check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def case_trees():
    return sorted(p for p in CASE_TREES.iterdir() if p.is_dir()) if CASE_TREES.is_dir() else []


def test_every_case_file_has_a_tree():
    # One tree per topology file of tests/pci/cases (each NN-*.md), written by write_case_trees.
    cases = pathlib.Path(__file__).parents[1] / "pci" / "cases"
    numbers = sorted(p.name[:2] for p in cases.glob("[0-9][0-9]-*.md"))
    assert len(numbers) == 11
    assert sorted({t.name[:2] for t in case_trees()}) == numbers


@pytest.mark.parametrize("tree", case_trees(), ids=lambda p: p.name)
def test_case_topology_equals_rig_topo_json(tree):
    machine = rig.Machine.at(tree)
    got = machine.topo()
    assert got == rig_json("topo", "--root", str(tree))
    assert got["functions"], "an empty topology would compare equal to anything empty"
    # The same endpoints as Machine.functions() lists, bridges left out.
    assert {f["bus"] for f in got["functions"]} <= {f.bus for f in machine.functions()}


@pytest.mark.parametrize("tree", case_trees(), ids=lambda p: p.name)
def test_case_pairing_and_routes_equal_the_command_line(tree):
    machine = rig.Machine.at(tree)
    topo = machine.topo()
    pairs = machine.pair_nics()
    assert [(p.gpu, p.nic) for p in pairs] == [(n["gpu"], n["paired"]) for n in topo["nics"]]
    for p in topo["pairs"][:6]:
        route = machine.route(p["provider"], p["client"])
        why = rig_json("topo", "--root", str(tree), "--why", p["provider"], p["client"])
        assert (route.verdict, route.forwards, route.distance, route.common) == \
            (why["verdict"], why["forwards"], why["distance"], why["common"])
        assert route.explain() == why["explanation"]
        assert route.forwards == p["forwards"] == machine.forwards(p["provider"], p["client"])
        assert route.distance == p["distance"] == machine.distance(p["provider"], p["client"])


def test_pinned_pair_equals_rig_topo_pair():
    tree = next((t for t in case_trees() if t.name.startswith("03")), None)
    assert tree is not None
    machine = rig.Machine.at(tree)
    gpu = machine.topo()["nics"][0]
    other = next(n["nic"] for n in gpu["ranked"] if n["nic"] != gpu["paired"])
    pin = f"{gpu['gpu']}={other}"
    got = machine.topo(pairs={gpu["gpu"]: other})
    assert got == rig_json("topo", "--root", str(tree), "--pair", pin)
    assert got["nics"][0]["paired"] == other != gpu["paired"]
    with pytest.raises(ValueError, match="GPU=NIC"):
        machine.topo(pairs="not a pin")


def test_local_machine_equals_rig_topo_json():
    assert rig.Machine.local().topo() == rig_json("topo")
    assert rig.Machine.local().ls() == rig_json("ls")


def test_simulated_machine_functions_and_route():
    one, two = rig.sim.machines(topology="acs", gpu_memory=1 << 20)
    functions = {f.bus: f for f in one.machine.functions()}
    assert functions[one.gpu_bus].class_code >> 16 == 0x03  # a display controller
    assert (functions[one.nic_bus].vendor, functions[one.nic_bus].class_code >> 16) == (0x14E4, 0x02)
    route = one.machine.route(one.gpu_bus, one.nic_bus)
    assert not route.forwards and route.verdict == "not supported"
    assert route.distance == "switch"
    assert {r.bus for r in route.redirects} == {"0000:02:00.0", "0000:02:01.0"}
    assert all(r.control == 0x001D for r in route.redirects)
    assert [(link.function, str(link.status)) for link in route.links] == \
        [("0000:03:00.0", "Gen4 x16"), ("0000:04:00.0", "Gen4 x16")]
    assert route.bottleneck_bytes_per_second == route.bottleneck.bytes_per_second > 0
    assert "0000:02:00.0" in route.explain()
    assert two.machine.forwards(two.gpu_bus, two.nic_bus) is False


def test_unknown_topology_is_an_error_listing_the_names():
    with pytest.raises(rig.Error, match="switch, acs, two-host-bridges") as raised:
        rig.sim.machines(topology="torus")
    assert isinstance(raised.value, RuntimeError)
    assert rig.sim.topologies[0] == "switch"
