// The real machines of tests/pci/cases/ rebuilt as topologies: what cases_test.cpp checks
// rig's answers on, and what write_case_trees writes as sysfs trees for the Python tests
// (tests/python/test_topology.py compares rig.Machine.topo() with `rig topo --json` on
// them). Bus numbers the dumps leave out are filled in as the files' sysfs sketches
// suggest.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "rig/sim/topology.hpp"

namespace rig::test::cases {

sim::Spec with_numa(sim::Spec s, int node);

sim::Topology dgx_a100(std::optional<std::uint16_t> acs);  // 01
sim::Topology h100_nine_nics(sim::Cpu cpu);                // 03
sim::Topology v100_sriov(std::uint16_t host_device, std::optional<std::uint16_t> acs,
                         std::optional<std::uint16_t> vf_acs);                                        // 05
sim::Topology rtx5880_amd();                                                                          // 07
sim::Topology wrx80();                                                                                // 09
sim::Topology q35(sim::Cpu cpu);                                                                      // 11
sim::Topology hyperv(sim::Cpu cpu, const std::vector<std::pair<std::uint32_t, sim::Spec>>& devices);  // 13
sim::Topology k80_haswell(std::optional<std::uint16_t> acs);                                          // 15

// 17: the topology and the nodes whose ACS one variant turns on.
struct Hygon {
    sim::Topology t{sim::Cpu::hygon()};
    sim::FunctionRef nodes[9];  // 37:00.0 36:zz.0 35:00.0 34:yy.0 33:00.0 3a:00.0 39:vv.0 38:00.0 34:ww.0
    sim::FunctionRef above;     // 32:xx.0, above the common node
};
Hygon hygon_dcus(int acs_on);

sim::Topology eight_gpus(std::uint16_t first, std::uint16_t second, std::optional<std::uint16_t> acs);  // 19
sim::Topology mi50_epyc();                                                                              // 21

// One machine of each case file, named for its file ("01-dgx-a100"), as the file
// describes it (ACS as its dumps show, its own CPU).
struct Case {
    std::string name;
    sim::Topology topology;
};
std::vector<Case> all();

}  // namespace rig::test::cases
