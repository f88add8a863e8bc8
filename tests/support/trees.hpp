// Topologies written as sysfs trees for tests: a Tree owns its directory; OneSwitch is
// the small machine most route tests vary.
#pragma once

#include <filesystem>
#include <optional>
#include <stdexcept>

#include "rig/pci/machine.hpp"
#include "rig/sim/fixture.hpp"
#include "temp_dir.hpp"

namespace rig::test {

namespace fs = std::filesystem;
using sim::Cpu;
using sim::Spec;
using sim::Topology;

// A topology written under a directory of its own, read back as a Machine.
class Tree {
public:
    explicit Tree(const Topology& t, std::optional<unsigned> config_bytes = std::nullopt) {
        const auto written = sim::write_sysfs(t, dir_.path(), config_bytes);
        if (!written) throw std::runtime_error(written.error());
    }
    pci::Machine machine() const { return pci::Machine::at(dir_.path()); }
    const fs::path& root() const { return dir_.path(); }

private:
    TempDir dir_;
};

// One switch below one root port of host bridge 0000:00:
//   00:00.0 root complex (host_device)      00:01.0 root port
//   01:00.0 switch upstream port            02:08.0, 02:10.0 downstream ports
//   03:00.0 GPU, 03:00.1 its audio          04:00.0 NIC
struct OneSwitch {
    Cpu cpu = Cpu::intel();
    std::uint16_t host_device = 0x6f00;  // Broadwell-EP: not in the allow-list
    std::optional<std::uint16_t> root_port_acs, upstream_acs, downstream_acs, gpu_acs, nic_acs;
    pci::LinkState gpu_link{pci::Generation::Gen4, 16};  // what the GPU can do
    std::optional<pci::LinkState> gpu_trained;           // what its link runs at; nullopt: what both ends can

    Topology build() const {
        Topology t(cpu);
        const auto h = t.host_bridge(0, 0);
        t.add(h, Spec::root_complex(0x8086, host_device));
        const auto rp = t.add(h, Spec::root_port(1, 0, 0x8086, 0x6f02, root_port_acs));
        auto usp_spec = Spec::upstream_port(0x10b5, 0x8747);
        usp_spec.acs_control = upstream_acs;
        const auto usp = t.add(rp, usp_spec);
        const auto dsp1 = t.add(usp, Spec::downstream_port(0x08, 0x10b5, 0x8747, downstream_acs));
        const auto dsp2 = t.add(usp, Spec::downstream_port(0x10, 0x10b5, 0x8747, downstream_acs));
        auto gpu = Spec::endpoint(0, 0, 0x10de, 0x1db4, 0x030200);
        gpu.acs_control = gpu_acs;
        gpu.link = gpu_link;
        gpu.trained = gpu_trained;
        t.add(dsp1, gpu);
        t.add(dsp1, Spec::endpoint(0, 1, 0x10de, 0x10f1, 0x040300));
        auto nic = Spec::endpoint(0, 0, 0x14e4, 0x1750, 0x020000);
        nic.acs_control = nic_acs;
        t.add(dsp2, nic);
        return t;
    }
};

}  // namespace rig::test
