// The driver's hot path, measured on two NICs of two simulated machines joined by a wire:
// posting 64-byte sends one and 16 per call, and polling completions 16 at a time; beside
// them, as the baseline of the same run, a poll of an empty completion queue. The models
// are stepped by hand with the timer paused, so that each timed loop runs the driver alone
// (but for the doorbell, which on a simulated machine is a call into the model where
// hardware takes one 8-byte store). Google Benchmark times it; callgrind counts the
// instructions of the measured_* functions, which only the timed loops call (README.md
// gives the commands, and callgrind_per_item.py turns a profile into instructions per
// WQE or CQE without the simulated doorbell's model).
#include <benchmark/benchmark.h>

#include <array>
#include <atomic>
#include <memory>
#include <span>
#include <stdexcept>

#include "rig/bnxt/cq.hpp"
#include "rig/bnxt/nic.hpp"
#include "rig/bnxt/qp.hpp"
#include "rig/bnxt/region.hpp"
#include "rig/bnxt/sim/model.hpp"
#include "rig/bnxt/sim/wire.hpp"
#include "rig/sim/system.hpp"

namespace {

using namespace rig;

constexpr const char* nic_bus = "0000:01:00.0";
constexpr std::uint32_t depth = 256;

// One root port, one bnxt model below it.
sim::System machine(const std::string& name, const std::shared_ptr<bnxt::sim::Model>& model) {
    sim::Topology t(sim::Cpu::intel());
    const auto h = t.host_bridge(0, 0);
    t.add(h, sim::Spec::root_complex(0x8086, 0x6f00));
    const auto rp = t.add(h, sim::Spec::root_port(1, 0, 0x8086, 0x6f02));
    t.add(rp, sim::endpoint_spec(0, 0, model->identity()));
    auto built = sim::System::build(name, std::move(t), {{nic_bus, model}});
    if (!built) throw std::runtime_error(built.error());
    return *built;
}

template <class T>
T value(Result<T> r) {
    if (!r) throw std::runtime_error(r.error());
    return std::move(*r);
}

// The driver's waits step both models.
class SteppingClock final : public bnxt::Clock {
public:
    explicit SteppingClock(std::array<bnxt::sim::Model*, 2> models) : models_(models) {}
    std::chrono::nanoseconds now() override { return std::chrono::milliseconds(ticks_.fetch_add(1)); }
    void pause() override {
        for (auto* m : models_) m->settle();
    }

private:
    std::array<bnxt::sim::Model*, 2> models_;
    std::atomic<std::int64_t> ticks_{0};
};

struct Link {
    std::shared_ptr<bnxt::sim::Model> model_a = std::make_shared<bnxt::sim::Model>(opts(1));
    std::shared_ptr<bnxt::sim::Model> model_b = std::make_shared<bnxt::sim::Model>(opts(2));
    sim::System sa = machine("a", model_a), sb = machine("b", model_b);
    bnxt::sim::Wire wire{*model_a, *model_b};
    std::shared_ptr<SteppingClock> clock = std::make_shared<SteppingClock>(std::array{model_a.get(), model_b.get()});
    bnxt::Nic a = value(open(sa)), b = value(open(sb));
    bnxt::Cq cqa = value(bnxt::Cq::create(a, depth)), cqb = value(bnxt::Cq::create(b, depth));
    bnxt::Qp qa = value(bnxt::Qp::create(a, cqa, cqa, {depth / 2, depth / 2}));
    bnxt::Qp qb = value(bnxt::Qp::create(b, cqb, cqb, {depth / 2, depth / 2}));
    bnxt::Region ra = value(bnxt::Region::host(a, 4096)), rb = value(bnxt::Region::host(b, 4096));
    std::uint64_t id = 0;

    Link() {
        if (auto r = qa.connect(qb.endpoint()); !r) throw std::runtime_error(r.error());
        if (auto r = qb.connect(qa.endpoint()); !r) throw std::runtime_error(r.error());
    }
    bnxt::Options open_options() const {
        bnxt::Options o;
        o.clock = clock;
        o.interrupts = bnxt::Interrupts::Poll;
        return o;
    }
    Result<bnxt::Nic> open(const sim::System& s) const { return bnxt::Nic::open(s.machine(), nic_bus, open_options()); }
    static bnxt::sim::ModelOptions opts(std::uint8_t last) {
        bnxt::sim::ModelOptions o;
        o.mac[5] = last;
        return o;
    }
    // Runs the models until the wire is quiet, then takes every completion on both sides
    // and posts receives until the receive queue is full.
    void quiesce() {
        std::array<bnxt::Completion, 64> out;
        for (int round = 0; round < 4; ++round) {
            clock->pause();
            while (cqa.poll(out) != 0 || cqb.poll(out) != 0) {}
        }
        while (qb.post(bnxt::Recv{.region = &rb, .bytes = 64, .id = id++})) {}
        clock->pause();
    }
};

// What the timed loops call, and nothing else does: callgrind's --toggle-collect counts
// exactly these (README.md).
[[gnu::noinline]] bool measured_post_one(bnxt::Qp& qp, const bnxt::Region& region, std::uint64_t id) {
    return qp.post(bnxt::Send{.region = &region, .bytes = 64, .id = id});
}

// One post of 16 sends the caller built; true if all were queued.
[[gnu::noinline]] bool measured_post16(bnxt::Qp& qp, std::span<const bnxt::Send, 16> sends) {
    return qp.post(sends) == sends.size();
}

[[gnu::noinline]] std::size_t measured_poll16(bnxt::Cq& cq, std::span<bnxt::Completion, 16> out) {
    return cq.poll(out);
}

void BM_PollEmptyCq(benchmark::State& state) {
    Link link;
    std::array<bnxt::Completion, 16> out;
    for (auto _ : state) benchmark::DoNotOptimize(link.cqa.poll(out));
}
BENCHMARK(BM_PollEmptyCq);

// Every 64 sends posted, untimed: the models run and the completions are taken.
void quiesce_every_64(benchmark::State& state, Link& link, std::uint64_t posted) {
    if (posted % 64 != 0) return;
    state.PauseTiming();
    link.quiesce();
    state.ResumeTiming();
}

// One signalled 64-byte send per iteration; every 64, untimed, the models run and the
// completions are taken.
void BM_Post(benchmark::State& state) {
    Link link;
    link.quiesce();
    std::uint64_t posted = 0;
    for (auto _ : state) {
        if (!measured_post_one(link.qa, link.ra, ++posted)) state.SkipWithError("send queue full");
        quiesce_every_64(state, link, posted);
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(posted));
}
BENCHMARK(BM_Post);

// 16 signalled 64-byte sends per iteration (the send queue holds 128); every 64, untimed,
// the models run and the completions are taken.
void BM_Post16(benchmark::State& state) {
    Link link;
    link.quiesce();
    std::array<bnxt::Send, 16> sends;
    for (std::uint64_t i = 0; i < sends.size(); ++i) sends[i] = bnxt::Send{.region = &link.ra, .bytes = 64, .id = i};
    std::uint64_t posted = 0;
    for (auto _ : state) {
        if (!measured_post16(link.qa, sends)) state.SkipWithError("send queue full");
        posted += 16;
        quiesce_every_64(state, link, posted);
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(posted));
}
BENCHMARK(BM_Post16);

// One poll taking 16 completions per iteration; every 64 completions, untimed, 64 sends
// are posted and the models run.
void BM_Poll16(benchmark::State& state) {
    Link link;
    std::array<bnxt::Completion, 16> out;
    std::int64_t taken = 0;
    auto refill = [&] {
        link.quiesce();
        for (int i = 0; i < 64; ++i) (void)link.qa.post(bnxt::Send{.region = &link.ra, .bytes = 64, .id = link.id++});
        for (int round = 0; round < 4; ++round) link.clock->pause();
    };
    refill();
    std::int64_t left = 64;
    for (auto _ : state) {
        const auto n = static_cast<std::int64_t>(measured_poll16(link.cqa, out));
        taken += n;
        left -= n;
        if (left <= 0) {
            state.PauseTiming();
            refill();
            left = 64;
            state.ResumeTiming();
        }
    }
    state.SetItemsProcessed(taken);
}
BENCHMARK(BM_Poll16);

}  // namespace

BENCHMARK_MAIN();
