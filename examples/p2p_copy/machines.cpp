// Building, opening and cabling p2p_copy's two machines (machines.hpp): the computers of
// rig/sim/pair.hpp, with their drivers opened.
#include "machines.hpp"

#include "rig/gpu/sim.hpp"

namespace p2p_copy {
namespace {

// The GPU vendor's shared address space on each machine: 1 TiB from 64 GiB on, as the
// simulated GPU's tests place it.
constexpr std::int64_t space_base = std::int64_t{0x10} << 32;
constexpr std::int64_t space_bytes = std::int64_t{1} << 40;

rig::Result<void> open_drivers(Side& side, const rig::sim::Computer& computer) {
    side.computer = &computer;
    side.space = std::make_shared<rig::Space>(space_base, space_bytes);
    auto gpu = rig::gpu::sim::open(side.machine(), side.gpu_bus(), side.space);
    if (!gpu) return rig::fail(side.name(), ": ", gpu.error());
    side.gpu = std::move(*gpu);
    auto nic = rig::bnxt::Nic::open(side.machine(), side.nic_bus());
    if (!nic) return rig::fail(side.name(), ": ", nic.error());
    side.nic = std::move(*nic);
    return {};
}

}  // namespace

Pair::~Pair() {
    for (Side* side : {&one, &two})
        if (side->nic) (void)side->nic->close();  // its error has no one left to tell
}

Local::~Local() {
    if (side.nic) (void)side.nic->close();
    cable.reset();
    if (computer.nic_model) computer.nic_model->stop();
}

rig::Result<std::unique_ptr<Local>> open_local(const Layout& layout, std::uint64_t gpu_memory_bytes, std::uint8_t index,
                                               std::string_view cable_address) {
    auto local = std::make_unique<Local>();
    local->topology = layout.name;
    if (auto r = rig::sim::build(local->computer, layout, gpu_config(gpu_memory_bytes), index); !r)
        return std::unexpected(std::move(r).error());
    auto c = rig::bnxt::sim::DatagramCable::bind(*local->computer.nic_model, cable_address);
    if (!c) return rig::fail(local->computer.name, ": ", c.error());
    local->cable = std::move(*c);
    if (auto r = open_drivers(local->side, local->computer); !r) return std::unexpected(std::move(r).error());
    return local;
}

rig::Result<std::unique_ptr<Pair>> open_pair(const Layout& layout, std::uint64_t gpu_memory_bytes, Cabling cabling) {
    return open_pair(layout, gpu_config(gpu_memory_bytes), cabling);
}

rig::Result<std::unique_ptr<Pair>> open_pair(const Layout& layout, const rig::gpu::sim::ModelConfig& gpu,
                                             Cabling cabling) {
    auto machines = rig::sim::pair(layout, gpu, cabling);
    if (!machines) return std::unexpected(std::move(machines).error());
    auto pair = std::make_unique<Pair>();
    pair->machines = std::move(*machines);
    pair->topology = layout.name;
    if (auto r = open_drivers(pair->one, pair->machines->one); !r) return std::unexpected(std::move(r).error());
    if (auto r = open_drivers(pair->two, pair->machines->two); !r) return std::unexpected(std::move(r).error());
    return pair;
}

}  // namespace p2p_copy
