// Sends 1 MiB of GPU memory from one machine to another, NIC straight into GPU memory.
// The machines are simulated (rig::sim): on a computer with the hardware, the machine is
// rig::pci::Machine::local() and everything from "open" on is the same.
#include <rig/bnxt/qp.hpp>
#include <rig/bnxt/sim/model.hpp>
#include <rig/bnxt/sim/wire.hpp>
#include <rig/gpu/sim.hpp>
#include <rig/gpu/sim/model.hpp>
#include <rig/sim/system.hpp>
#include <rig/space.hpp>

#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

constexpr std::uint64_t bytes = 1 << 20;
constexpr const char* gpu_bus = "0000:00:01.0";
constexpr const char* nic_bus = "0000:00:02.0";

template <class T>
T must(rig::Result<T> r) {
    if (!r) throw std::runtime_error(r.error());
    return std::move(*r);
}
void must(rig::Result<void> r) {
    if (!r) throw std::runtime_error(r.error());
}

// What one machine needs to send or receive: its GPU's memory registered with its NIC.
struct Side {
    rig::gpu::Gpu gpu;
    rig::bnxt::Nic nic;
    rig::gpu::Memory memory;
    rig::bnxt::Region region;
    rig::bnxt::Cq cq;
    rig::bnxt::Qp qp;
};

Side open(const rig::pci::Machine& machine) {
    if (!machine.forwards(gpu_bus, nic_bus))  // may the NIC reach the GPU's BAR?
        throw std::runtime_error(machine.route(gpu_bus, nic_bus).explain());
    auto space = std::make_shared<rig::Space>(std::int64_t{1} << 36, std::int64_t{1} << 40);
    auto gpu = must(rig::gpu::sim::open(machine, gpu_bus, space));
    auto nic = must(rig::bnxt::Nic::open(machine, nic_bus));
    auto memory = must(gpu.alloc(bytes));
    auto region = must(rig::bnxt::Region::device(nic, must(memory.runs()).runs));  // the GPU's BAR runs
    auto cq = must(rig::bnxt::Cq::create(nic, 16));
    auto qp = must(rig::bnxt::Qp::create(nic, cq, cq, {8, 8}));
    return {std::move(gpu), std::move(nic), memory, region, std::move(cq), std::move(qp)};
}

int main() try {
    // Two simulated machines: an AMD EPYC host bridge with a GPU and a bnxt NIC on its
    // root bus, the two NICs cabled together. The models run beside the CPU.
    std::shared_ptr<rig::bnxt::sim::Model> nic_models[2];
    std::optional<rig::sim::System> machines[2];
    for (int i = 0; i < 2; ++i) {
        auto gpu_model = std::make_shared<rig::gpu::sim::Model>();
        rig::bnxt::sim::ModelOptions options;
        options.mac[5] = static_cast<std::uint8_t>(i + 1);
        nic_models[i] = std::make_shared<rig::bnxt::sim::Model>(options);
        rig::sim::Topology topology(rig::sim::Cpu::amd());
        const auto host = topology.host_bridge(0, 0);
        topology.add(host, rig::sim::endpoint_spec(1, 0, gpu_model->identity()));
        topology.add(host, rig::sim::endpoint_spec(2, 0, nic_models[i]->identity()));
        machines[i] = must(rig::sim::System::build("sim" + std::to_string(i), topology,
                                                   {{gpu_bus, gpu_model}, {nic_bus, nic_models[i]}}));
        nic_models[i]->start();
    }
    rig::bnxt::sim::Wire wire(*nic_models[0], *nic_models[1]);

    Side sender = open(machines[0]->machine());
    Side receiver = open(machines[1]->machine());
    must(sender.qp.connect(receiver.qp.endpoint()));
    must(receiver.qp.connect(sender.qp.endpoint()));

    must(sender.gpu.fill(sender.memory, 42));  // a pattern, written on the GPU
    if (!receiver.qp.post(rig::bnxt::Recv{.region = &receiver.region, .bytes = bytes, .id = 1}) ||
        !sender.qp.post(rig::bnxt::Send{.region = &sender.region, .bytes = bytes, .id = 1}))
        throw std::runtime_error("a queue is full");
    // The receive's completion, not the data, says the bytes are in GPU memory.
    rig::bnxt::Completion done[1];
    while (must(receiver.cq.wait(done, std::chrono::seconds(1))) == 0) {}
    if (!done[0].ok()) throw std::runtime_error(std::string(rig::bnxt::to_string(done[0].status)));
    const bool same = must(sender.gpu.checksum(sender.memory)) == must(receiver.gpu.checksum(receiver.memory));
    std::printf("%s: %llu bytes GPU to GPU, checksums %s\n", receiver.nic.bus().c_str(),
                static_cast<unsigned long long>(done[0].bytes), same ? "match" : "DIFFER");
    return same ? 0 : 1;
} catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
}
