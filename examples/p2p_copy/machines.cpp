// Building, opening and cabling p2p_copy's two machines (machines.hpp).
#include "machines.hpp"

#include "rig/bnxt/sim/wire.hpp"
#include "rig/gpu/sim.hpp"

namespace p2p_copy {
namespace {

// The GPU vendor's shared address space on each machine: 1 TiB from 64 GiB on, as the
// simulated GPU's tests place it.
constexpr std::int64_t space_base = std::int64_t{0x10} << 32;
constexpr std::int64_t space_bytes = std::int64_t{1} << 40;

rig::Result<void> build_side(Side& side, const Layout& layout, std::uint64_t gpu_memory_bytes, std::uint8_t index) {
    side.name = "machine " + std::to_string(index);
    side.gpu_model = std::make_shared<rig::gpu::sim::Model>(gpu_config(gpu_memory_bytes));
    rig::bnxt::sim::Options nic_options;
    nic_options.mac[5] = index;  // 02:00:00:00:00:01 and :02: two ports of one simulated site
    side.nic_model = std::make_shared<rig::bnxt::sim::Nic>(nic_options);
    side.gpu_bus = layout.gpu;
    side.nic_bus = layout.nic;
    auto system = rig::sim::System::build("sim" + std::to_string(index), layout.topology,
                                          {{layout.gpu, side.gpu_model}, {layout.nic, side.nic_model}});
    if (!system) return rig::fail(side.name, ": ", system.error());
    side.system = std::move(*system);
    side.nic_model->start();  // the NIC runs beside the CPU, as hardware does
    return {};
}

rig::Result<void> open_drivers(Side& side) {
    side.space = std::make_shared<rig::Space>(space_base, space_bytes);
    auto gpu = rig::gpu::sim::open(side.machine(), side.gpu_bus, side.space);
    if (!gpu) return rig::fail(side.name, ": ", gpu.error());
    side.gpu = std::move(*gpu);
    auto nic = rig::bnxt::Nic::open(side.machine(), side.nic_bus);
    if (!nic) return rig::fail(side.name, ": ", nic.error());
    side.nic = std::move(*nic);
    return {};
}

rig::Result<void> cable(Pair& pair, Cabling cabling) {
    auto& one = *pair.one.nic_model;
    auto& two = *pair.two.nic_model;
    if (cabling == Cabling::wire) {
        pair.cables.push_back(std::make_unique<rig::bnxt::sim::Wire>(one, two));
        return {};
    }
    using rig::bnxt::sim::DatagramCable;
    for (auto* nic : {&one, &two}) {
        auto c = DatagramCable::bind(*nic, "127.0.0.1:0");
        if (!c) return std::unexpected(std::move(c).error());
        pair.cables.push_back(std::move(*c));
    }
    auto& a = static_cast<DatagramCable&>(*pair.cables[0]);
    auto& b = static_cast<DatagramCable&>(*pair.cables[1]);
    if (auto r = a.connect(b.local()); !r) return r;
    return b.connect(a.local());
}

}  // namespace

rig::gpu::sim::ModelConfig gpu_config(std::uint64_t memory_bytes) {
    rig::gpu::sim::ModelConfig config;
    config.memory_bytes = memory_bytes;
    config.bar_bytes = memory_bytes;
    return config;
}

rig::sim::Identity nic_identity() { return rig::bnxt::sim::Nic().identity(); }

Pair::~Pair() {
    for (Side* side : {&one, &two})
        if (side->nic) (void)side->nic->close();  // its error has no one left to tell
    cables.clear();
    for (Side* side : {&one, &two})
        if (side->nic_model) side->nic_model->stop();
}

Local::~Local() {
    if (side.nic) (void)side.nic->close();
    cable.reset();
    if (side.nic_model) side.nic_model->stop();
}

rig::Result<std::unique_ptr<Local>> open_local(const Layout& layout, std::uint64_t gpu_memory_bytes, std::uint8_t index,
                                               std::string_view cable_address) {
    auto local = std::make_unique<Local>();
    local->topology = layout.name;
    if (auto r = build_side(local->side, layout, gpu_memory_bytes, index); !r) return std::unexpected(std::move(r).error());
    auto c = rig::bnxt::sim::DatagramCable::bind(*local->side.nic_model, cable_address);
    if (!c) return rig::fail(local->side.name, ": ", c.error());
    local->cable = std::move(*c);
    if (auto r = open_drivers(local->side); !r) return std::unexpected(std::move(r).error());
    return local;
}

rig::Result<std::unique_ptr<Pair>> open_pair(const Layout& layout, std::uint64_t gpu_memory_bytes, Cabling cabling) {
    auto pair = std::make_unique<Pair>();
    pair->topology = layout.name;
    if (auto r = build_side(pair->one, layout, gpu_memory_bytes, 1); !r) return std::unexpected(std::move(r).error());
    if (auto r = build_side(pair->two, layout, gpu_memory_bytes, 2); !r) return std::unexpected(std::move(r).error());
    if (auto r = cable(*pair, cabling); !r) return std::unexpected(std::move(r).error());
    for (Side* side : {&pair->one, &pair->two})
        if (auto r = open_drivers(*side); !r) return std::unexpected(std::move(r).error());
    return pair;
}

}  // namespace p2p_copy
