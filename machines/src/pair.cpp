// Building and cabling two simulated computers (rig/sim/pair.hpp).
#include "rig/sim/pair.hpp"

#include "rig/bnxt/sim/datagram.hpp"
#include "rig/bnxt/sim/wire.hpp"

namespace rig::sim {

gpu::sim::ModelConfig gpu_config(std::uint64_t memory_bytes) {
    gpu::sim::ModelConfig config;
    config.memory_bytes = memory_bytes;
    config.bar_bytes = memory_bytes;
    return config;
}

Identity nic_identity() { return bnxt::sim::Model().identity(); }

Result<void> build(Computer& computer, const Layout& layout, const gpu::sim::ModelConfig& gpu, std::uint8_t index) {
    computer.name = "machine " + std::to_string(index);
    computer.gpu_model = std::make_shared<gpu::sim::Model>(gpu);
    bnxt::sim::ModelOptions nic_options;
    nic_options.mac[5] = index;  // 02:00:00:00:00:01 and :02: two ports of one simulated site
    computer.nic_model = std::make_shared<bnxt::sim::Model>(nic_options);
    computer.gpu_bus = layout.gpu;
    computer.nic_bus = layout.nic;
    auto system = System::build("sim" + std::to_string(index), layout.topology,
                                {{layout.gpu, computer.gpu_model}, {layout.nic, computer.nic_model}});
    if (!system) return fail(computer.name, ": ", system.error());
    computer.system = std::move(*system);
    computer.nic_model->start();  // the NIC runs beside the CPU, as hardware does
    return {};
}

Result<std::vector<std::unique_ptr<bnxt::sim::Cable>>> cable(bnxt::sim::Model& one, bnxt::sim::Model& two,
                                                             Cabling cabling) {
    std::vector<std::unique_ptr<bnxt::sim::Cable>> cables;
    if (cabling == Cabling::wire) {
        cables.push_back(std::make_unique<bnxt::sim::Wire>(one, two));
        return cables;
    }
    using bnxt::sim::DatagramCable;
    for (auto* nic : {&one, &two}) {
        auto c = DatagramCable::bind(*nic, "127.0.0.1:0");
        if (!c) return std::unexpected(std::move(c).error());
        cables.push_back(std::move(*c));
    }
    auto& a = static_cast<DatagramCable&>(*cables[0]);
    auto& b = static_cast<DatagramCable&>(*cables[1]);
    if (auto r = a.connect(b.local()); !r) return std::unexpected(std::move(r).error());
    if (auto r = b.connect(a.local()); !r) return std::unexpected(std::move(r).error());
    return cables;
}

Pair::~Pair() {
    cables.clear();
    for (Computer* computer : {&one, &two})
        if (computer->nic_model) computer->nic_model->stop();
}

Result<std::unique_ptr<Pair>> pair(const Layout& layout, const gpu::sim::ModelConfig& gpu, Cabling cabling) {
    auto p = std::make_unique<Pair>();
    p->topology = layout.name;
    if (auto r = build(p->one, layout, gpu, 1); !r) return std::unexpected(std::move(r).error());
    if (auto r = build(p->two, layout, gpu, 2); !r) return std::unexpected(std::move(r).error());
    auto cables = cable(*p->one.nic_model, *p->two.nic_model, cabling);
    if (!cables) return std::unexpected(std::move(cables).error());
    p->cables = std::move(*cables);
    return p;
}

Result<std::unique_ptr<Pair>> pair(std::string_view name, std::uint64_t gpu_memory_bytes, std::uint64_t bar_bytes,
                                   Cabling cabling) {
    auto config = gpu_config(gpu_memory_bytes);
    if (bar_bytes != 0) config.bar_bytes = bar_bytes;
    const auto gpu_identity = gpu::sim::Model(config).identity();
    auto layout = builtin(name, gpu_identity, nic_identity());
    if (!layout) return std::unexpected(std::move(layout).error());
    return pair(*layout, config, cabling);
}

}  // namespace rig::sim
