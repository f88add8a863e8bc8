// rig.sim.machines: the two simulated computers p2p_copy runs on (rig/sim/pair.hpp), each
// with its GPU's and NIC's bus addresses, cabled.
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include "common.hpp"
#include "rig/gpu/sim/model.hpp"
#include "rig/sim/layouts.hpp"
#include "rig/sim/pair.hpp"

namespace rig::python {
namespace {

// One computer of a pair, as Python sees it: its Machine keeps the whole pair alive.
struct Computer {
    std::string name, gpu_bus, nic_bus;
    Machine machine;
};

struct Machines {
    std::shared_ptr<sim::Pair> pair;
    Computer one, two;
};

sim::Cabling cabling_of(std::string_view name) {
    if (name == "wire") return sim::Cabling::wire;
    if (name == "udp") return sim::Cabling::udp;
    throw std::invalid_argument("cabling \"" + std::string(name) + "\": \"wire\" or \"udp\"");
}

Machines machines(const std::string& topology, std::uint64_t gpu_memory, std::uint64_t bar, const std::string& cabling,
                  const std::optional<std::string>& gpu, const std::optional<std::string>& nic) {
    const auto how = cabling_of(cabling);
    auto config = sim::gpu_config(gpu_memory);
    if (bar != 0) config.bar_bytes = bar;
    if (gpu.has_value() != nic.has_value())
        throw std::invalid_argument("gpu and nic: give both bus addresses of a snapshot, or neither");
    std::unique_ptr<sim::Pair> made = must(unlocked([&]() -> Result<std::unique_ptr<sim::Pair>> {
        const auto gpu_identity = gpu::sim::Model(config).identity();
        auto layout = gpu ? sim::from_snapshot(topology, *gpu, *nic, gpu_identity, sim::nic_identity())
                          : sim::builtin(topology, gpu_identity, sim::nic_identity());
        if (!layout) return std::unexpected(std::move(layout).error());
        return sim::pair(*layout, config, how);
    }));
    std::shared_ptr<sim::Pair> pair = std::move(made);
    const auto computer = [&](const sim::Computer& c) {
        return Computer{c.name, c.gpu_bus, c.nic_bus, Machine{pair, c.machine()}};
    };
    return Machines{pair, computer(pair->one), computer(pair->two)};
}

}  // namespace

void bind_sim(py::module_& m) {
    py::class_<Computer>(m, "Computer", "One simulated computer: its machine and where its GPU and NIC sit on it.")
        .def_readonly("name", &Computer::name, "\"machine 1\" or \"machine 2\"")
        .def_readonly("machine", &Computer::machine, "its rig.Machine (keeps both computers running while it lives)")
        .def_readonly("gpu_bus", &Computer::gpu_bus, "the simulated GPU's bus address, \"0000:03:00.0\"")
        .def_readonly("nic_bus", &Computer::nic_bus, "the bnxt NIC's bus address, \"0000:04:00.0\"")
        .def("__repr__", [](const Computer& c) {
            return "Computer('" + c.name + "', gpu_bus='" + c.gpu_bus + "', nic_bus='" + c.nic_bus + "')";
        });

    py::class_<Machines>(
        m, "Machines",
        "The two computers, cabled: m1, m2 = rig.sim.machines(). Their models run until the last object "
        "made on either machine is gone.")
        .def_property_readonly("topology", [](const Machines& s) { return s.pair->topology; })
        .def_readonly("one", &Machines::one, "machine 1 (p2p_copy's sender)")
        .def_readonly("two", &Machines::two, "machine 2 (p2p_copy's receiver)")
        .def("__len__", [](const Machines&) { return 2; })
        .def("__getitem__",
             [](const Machines& s, int i) {
                 if (i == 0 || i == -2) return s.one;
                 if (i == 1 || i == -1) return s.two;
                 throw py::index_error("Machines has two computers: 0 and 1");
             })
        .def("__iter__", [](const Machines& s) { return py::iter(py::make_tuple(s.one, s.two)); });

    m.attr("topologies") = py::cast(std::vector<std::string>(sim::builtin_names.begin(), sim::builtin_names.end()));
    m.def(
        "machines", &machines, py::arg("topology") = "switch", py::arg("gpu_memory") = std::uint64_t{64} << 20,
        py::arg("bar") = 0, py::arg("cabling") = "wire", py::arg("gpu") = py::none(), py::arg("nic") = py::none(),
        "Two simulated computers as p2p_copy builds them, their NICs cabled, their models running; no driver opened.\n\n"
        "topology: a built-in name (rig.sim.topologies: switch, acs, two-host-bridges, iommu, iommu-direct, "
        "iommu-blocked, small-bar), or a directory `rig snapshot` wrote, with gpu and nic the bus addresses where the "
        "simulated GPU and NIC take the places of its functions.\n"
        "gpu_memory: bytes of each GPU's memory, a power of two >= 64 KiB. bar: bytes of its memory BAR, a power of "
        "two at most gpu_memory (0: all of it; small-bar's point is a smaller one).\n"
        "cabling: \"wire\" (in this process) or \"udp\" (datagram cables on 127.0.0.1).\n"
        "rig.Error naming the machine and what failed, or listing the built-in names; ValueError for a size that is "
        "no such power of two.");
}

}  // namespace rig::python
