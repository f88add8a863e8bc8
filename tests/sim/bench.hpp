// Simulated machines the sim and Function tests share.
//
// Bench: one switch below root port 00:01.0 of host bridge 0000:00, and a second root port:
//   00:00.0 root complex (host_device)        00:01.0 root port        00:02.0 root port
//   01:00.0 switch upstream port              02:08.0, 02:10.0 downstream ports (downstream_acs)
//   03:00.0 MemoryDevice (1 MiB memory BAR0)  04:00.0 DmaEngine        05:00.0 DmaEngine (below 00:02.0)
// Every endpoint has an IOMMU group where `iommu`.
#pragma once

#include <memory>
#include <optional>
#include <stdexcept>

#include "rig/sim/dma_engine.hpp"
#include "rig/sim/system.hpp"

namespace rig::test {

inline constexpr const char* memory_bus = "0000:03:00.0";
inline constexpr const char* engine_bus = "0000:04:00.0";
inline constexpr const char* far_engine_bus = "0000:05:00.0";

struct Bench {
    sim::Cpu cpu = sim::Cpu::intel();
    std::uint16_t host_device = 0x6f00;  // Broadwell-EP: not in p2pdma's allow-list
    std::optional<std::uint16_t> downstream_acs;
    bool iommu = true;
    sim::DmaEngine::Threading threading = sim::DmaEngine::Threading::Own;
    std::string name = "sim0";

    std::shared_ptr<sim::DmaEngine> engine = std::make_shared<sim::DmaEngine>(threading);
    std::shared_ptr<sim::DmaEngine> far_engine = std::make_shared<sim::DmaEngine>(threading, 0x524a);
    std::shared_ptr<sim::MemoryDevice> memory = std::make_shared<sim::MemoryDevice>();

    sim::Topology topology() const {
        sim::Topology t(cpu);
        const auto h = t.host_bridge(0, 0);
        t.add(h, sim::Spec::root_complex(0x8086, host_device));
        const auto rp = t.add(h, sim::Spec::root_port(1, 0, 0x8086, 0x6f02));
        const auto usp = t.add(rp, sim::Spec::upstream_port(0x10b5, 0x8747));
        const auto dsp1 = t.add(usp, sim::Spec::downstream_port(0x08, 0x10b5, 0x8747, downstream_acs));
        const auto dsp2 = t.add(usp, sim::Spec::downstream_port(0x10, 0x10b5, 0x8747, downstream_acs));
        auto group = [&](sim::Spec s, unsigned n) {
            if (iommu) s.iommu_group = n;
            return s;
        };
        t.add(dsp1, group(sim::endpoint_spec(0, 0, memory->identity()), 10));
        t.add(dsp2, group(sim::endpoint_spec(0, 0, engine->identity()), 11));
        const auto rp2 = t.add(h, sim::Spec::root_port(2, 0, 0x8086, 0x6f03));
        t.add(rp2, group(sim::endpoint_spec(0, 0, far_engine->identity()), 12));
        return t;
    }

    sim::System build() {
        engine = std::make_shared<sim::DmaEngine>(threading);
        far_engine = std::make_shared<sim::DmaEngine>(threading, 0x524a);
        auto built = sim::System::build(name, topology(),
                                        {{memory_bus, memory}, {engine_bus, engine}, {far_engine_bus, far_engine}});
        if (!built) throw std::runtime_error(built.error());
        return *built;
    }
};

}  // namespace rig::test
