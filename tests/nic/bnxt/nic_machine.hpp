// tests/nic/bnxt/nic_machine.hpp: simulated machines with a bnxt model for the driver's
// tests (rig::sim::System, rig::bnxt::sim::Model). The driver under test reaches them only
// through Machine, Function and Window, as it reaches any machine.
//
// Each machine:
//   00:00.0 root complex (Broadwell-EP 0x6f00: not in p2pdma's allow-list)
//   00:01.0 root port ─ 01:00.0 switch upstream port ─┬─ 02:08.0 ─ 03:00.0 GPU-like memory (near)
//                                                     └─ 02:10.0 ─ 04:00.0 bnxt NIC
//   00:02.0 root port ─ 05:00.0 GPU-like memory (far)
// The NIC reaches the near memory's BAR (below one switch) and not the far one's (two root
// ports of a host bridge that does not forward between them). With `iommu` every endpoint
// has an IOMMU group, so the NIC is Addressing::Iommu. Routing changes the CPU and the
// switch's ACS: with redirect_to_allowed both BARs are reached through the host bridge.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <array>
#include <memory>
#include <optional>
#include <utility>
#include <vector>
#include <stdexcept>
#include <string>

#include "rig/bnxt/clock.hpp"
#include "rig/bnxt/cq.hpp"
#include "rig/bnxt/nic.hpp"
#include "rig/bnxt/qp.hpp"
#include "rig/bnxt/region.hpp"
#include "rig/bnxt/sim/model.hpp"
#include "rig/bnxt/sim/testing/faults.hpp"
#include "rig/bnxt/sim/wire.hpp"
#include "rig/sim/dma_engine.hpp"
#include "rig/sim/system.hpp"

namespace rig::bnxt::test {

inline constexpr const char* near_gpu_bus = "0000:03:00.0";
inline constexpr const char* nic_bus = "0000:04:00.0";
inline constexpr const char* far_gpu_bus = "0000:05:00.0";
inline constexpr std::uint64_t gpu_bytes = 4 << 20;

enum class Iommu { Off, On };
enum class Thread { Own, Stepped };

// What routes peer requests: the CPU (an AMD Zen root complex carries every pair) and the
// ACS Control of the switch's downstream ports (0x001d redirects, as Linux sets it with an
// IOMMU on).
struct Routing {
    rig::sim::Cpu cpu = rig::sim::Cpu::intel();
    std::optional<std::uint16_t> downstream_acs;
    static Routing redirect_to_allowed() { return {rig::sim::Cpu::amd(0x19), 0x001d}; }
    static Routing redirect_to_refused() { return {rig::sim::Cpu::intel(), 0x001d}; }
};

struct SimMachine {
    explicit SimMachine(std::string name, Iommu iommu = Iommu::Off, std::uint8_t mac_last = 1,
                        Thread thread = Thread::Own, sim::ModelOptions model_options = {}, Routing routing = {})
        : model(std::make_shared<sim::Model>(with_mac(model_options, mac_last))),
          near_gpu(std::make_shared<rig::sim::MemoryDevice>(gpu_bytes, 0x4d45)),
          far_gpu(std::make_shared<rig::sim::MemoryDevice>(gpu_bytes, 0x4d46)),
          system(build(std::move(name), iommu, routing)),
          faults(*model) {
        if (thread == Thread::Own) model->start();
    }
    ~SimMachine() { model->stop(); }

    const pci::Machine& machine() const { return system.machine(); }
    Result<Nic> open(Options options = {}) const { return Nic::open(machine(), nic_bus, std::move(options)); }
    // The runs of a GPU-like memory BAR: `bytes` from `offset`.
    std::vector<pci::Run> gpu_runs(const char* bus, std::uint64_t offset, std::uint64_t bytes) const {
        const auto& t = system.topology();
        const auto f = t.find(bus);
        return {pci::Run{pci::DmaAddress{t[*f].bar_address[0] + offset}, bytes}};
    }
    std::span<std::byte> gpu_memory(const std::shared_ptr<rig::sim::MemoryDevice>& gpu) const { return gpu->memory(0); }
    // Takes the GPU-like functions, as their own driver would, so that their BARs decode
    // (a take turns Memory Space on).
    void take_gpus() {
        for (const char* bus : {near_gpu_bus, far_gpu_bus}) {
            auto f = pci::Function::take(machine(), bus);
            if (!f) throw std::runtime_error(f.error());
            gpus.push_back(std::move(*f));
        }
    }

    std::shared_ptr<sim::Model> model;
    std::shared_ptr<rig::sim::MemoryDevice> near_gpu;
    std::shared_ptr<rig::sim::MemoryDevice> far_gpu;
    rig::sim::System system;
    sim::testing::Faults faults;
    std::vector<pci::Function> gpus;

private:
    static sim::ModelOptions with_mac(sim::ModelOptions o, std::uint8_t mac_last) {
        o.mac[5] = mac_last;
        return o;
    }
    rig::sim::System build(std::string name, Iommu iommu, const Routing& routing) {
        rig::sim::Topology t(routing.cpu);
        const auto h = t.host_bridge(0, 0);
        t.add(h, rig::sim::Spec::root_complex(0x8086, 0x6f00));
        const auto rp = t.add(h, rig::sim::Spec::root_port(1, 0, 0x8086, 0x6f02));
        const auto usp = t.add(rp, rig::sim::Spec::upstream_port(0x10b5, 0x8747));
        const auto dsp1 = t.add(usp, rig::sim::Spec::downstream_port(0x08, 0x10b5, 0x8747, routing.downstream_acs));
        const auto dsp2 = t.add(usp, rig::sim::Spec::downstream_port(0x10, 0x10b5, 0x8747, routing.downstream_acs));
        auto group = [&](rig::sim::Spec s, unsigned n) {
            if (iommu == Iommu::On) s.iommu_group = n;
            return s;
        };
        t.add(dsp1, group(rig::sim::endpoint_spec(0, 0, near_gpu->identity()), 10));
        t.add(dsp2, group(rig::sim::endpoint_spec(0, 0, model->identity()), 11));
        const auto rp2 = t.add(h, rig::sim::Spec::root_port(2, 0, 0x8086, 0x6f03));
        t.add(rp2, group(rig::sim::endpoint_spec(0, 0, far_gpu->identity()), 12));
        auto built = rig::sim::System::build(name, std::move(t),
                                             {{near_gpu_bus, near_gpu}, {nic_bus, model}, {far_gpu_bus, far_gpu}});
        if (!built) throw std::runtime_error(built.error());
        return *built;
    }
};

// A clock whose pause steps the given models by hand (Thread::Stepped): every wait of the
// driver runs the NICs, on the test's thread, in a fixed order.
class SteppingClock final : public Clock {
public:
    explicit SteppingClock(std::vector<sim::Model*> models) : models_(std::move(models)) {}
    std::chrono::nanoseconds now() override { return std::chrono::milliseconds(ticks_.fetch_add(1)); }
    void pause() override {
        for (sim::Model* m : models_) m->settle();
    }

private:
    std::vector<sim::Model*> models_;
    std::atomic<std::int64_t> ticks_{0};
};

// Options whose clock steps the machine's model (Thread::Stepped) and which poll.
inline Options stepped_options(const SimMachine& m) {
    Options o;
    o.clock = std::make_shared<SteppingClock>(std::vector<sim::Model*>{m.model.get()});
    o.interrupts = Interrupts::Poll;
    return o;
}

inline Region host(const Nic& nic, std::uint64_t bytes) {
    auto r = Region::host(nic, bytes);
    if (!r) throw std::runtime_error(r.error());
    return *r;
}

inline std::vector<std::byte> read_back(const Region& r, std::uint64_t offset, std::size_t n) {
    std::vector<std::byte> out(n);
    r.read(offset, out);
    return out;
}

inline std::vector<std::byte> pattern(std::size_t n, std::uint32_t seed) {
    std::vector<std::byte> out(n);
    std::uint32_t x = seed * 2654435761u + 1;
    for (auto& b : out) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        b = static_cast<std::byte>(x);
    }
    return out;
}

// One side of a connection: a NIC, its send and receive CQs and one Qp.
struct Side {
    std::optional<Nic> nic;
    std::optional<Cq> send_cq;
    std::optional<Cq> recv_cq;
    std::optional<Qp> qp;
};

struct PairOptions {
    Iommu iommu = Iommu::Off;
    Routing routing{};
    Depths depths{};
    std::uint32_t cq_depth = 0;  // 0: the depths, send and recv CQ each
    Retries retries{};
    Options nic{};
    bool connect = true;
    Thread thread = Thread::Own;  // Stepped: the NICs' clock steps both models on every pause
};

// Two NICs on two simulated machines joined by a wire, each with one RC queue pair
// connected to the other's (§7.2).
struct Pair {
    explicit Pair(PairOptions o = {})
        : a("a", o.iommu, 1, o.thread, {}, o.routing),
          b("b", o.iommu, 2, o.thread, {}, o.routing),
          wire(*a.model, *b.model) {
        if (o.thread == Thread::Stepped)
            o.nic.clock = std::make_shared<SteppingClock>(std::vector<sim::Model*>{a.model.get(), b.model.get()});
        for (auto [m, s] : {std::pair{&a, &sa}, std::pair{&b, &sb}}) {
            auto n = m->open(o.nic);
            if (!n) throw std::runtime_error(n.error());
            s->nic.emplace(std::move(*n));
            auto scq = Cq::create(*s->nic, o.cq_depth != 0 ? o.cq_depth : o.depths.send);
            auto rcq = Cq::create(*s->nic, o.cq_depth != 0 ? o.cq_depth : o.depths.recv);
            if (!scq || !rcq) throw std::runtime_error(!scq ? scq.error() : rcq.error());
            s->send_cq.emplace(std::move(*scq));
            s->recv_cq.emplace(std::move(*rcq));
            auto qp = Qp::create(*s->nic, *s->send_cq, *s->recv_cq, o.depths);
            if (!qp) throw std::runtime_error(qp.error());
            s->qp.emplace(std::move(*qp));
        }
        if (o.connect) connect(o.retries);
    }
    void connect(Retries retries = {}) {
        const Endpoint ea = sa.qp->endpoint(), eb = sb.qp->endpoint();
        if (auto r = sa.qp->connect(eb, retries); !r) throw std::runtime_error(r.error());
        if (auto r = sb.qp->connect(ea, retries); !r) throw std::runtime_error(r.error());
    }

    SimMachine a, b;
    sim::Wire wire;
    Side sa, sb;
};

// Takes `n` completions from `cq`, waiting up to `timeout` in all; fewer if it passed.
inline std::vector<Completion> take(Cq& cq, std::size_t n,
                                    std::chrono::milliseconds timeout = std::chrono::milliseconds(20000)) {
    std::vector<Completion> out;
    std::array<Completion, 64> batch;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (out.size() < n) {
        const auto now = std::chrono::steady_clock::now();
        if (now >= deadline) break;
        const std::size_t room = std::min(batch.size(), n - out.size());
        auto got = cq.wait(std::span(batch.data(), room), deadline - now);
        if (!got) {
            ADD_FAILURE() << got.error();
            break;
        }
        out.insert(out.end(), batch.begin(), batch.begin() + static_cast<std::ptrdiff_t>(*got));
    }
    return out;
}

}  // namespace rig::bnxt::test
