// Throughput of the bnxt model (Google Benchmark): one RC SEND of 4 KiB or 1 MiB from one
// model to another over a Wire, posted, carried and completed, against a memcpy of the
// same bytes in the same run as the baseline. Stepped: both models stepped on the
// benchmark's thread (the model's own cost); threaded: each model on its own thread.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "pair.hpp"

namespace rig::bnxt::sim::test {
namespace {

class BenchPair : public Pair {
public:
    void TestBody() override {}
    void setup(std::uint64_t n) {
        open({.sq_size = 64, .rq_size = 64, .cq_size = 256, .mtu_code = 4, .buffer_bytes = n});
        a.bus.poke(abuf, pattern(n, 1));
    }
    void one(std::uint64_t n, bool threaded) {
        b.post_recv(bqp, 1, {{bbuf, bkey, static_cast<std::uint32_t>(n)}});
        a.post_send(aqp, spec::wqe_send, spec::signal_comp, {{abuf, akey, static_cast<std::uint32_t>(n)}});
        if (!threaded) settle(a, b);
        while (!b.poll(bcq)) std::this_thread::yield();
        while (!a.poll(acq)) std::this_thread::yield();
    }
    using Pair::a;
    using Pair::b;
};

void BM_ModelSendStepped(benchmark::State& state) {
    const auto n = static_cast<std::uint64_t>(state.range(0));
    BenchPair p;
    p.setup(n);
    for (auto _ : state) p.one(n, false);
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * n));
}

void BM_ModelSendThreaded(benchmark::State& state) {
    const auto n = static_cast<std::uint64_t>(state.range(0));
    BenchPair p;
    p.setup(n);
    p.a.nic.start();
    p.b.nic.start();
    for (auto _ : state) p.one(n, true);
    p.a.nic.stop();
    p.b.nic.stop();
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * n));
}

void BM_MemcpyBaseline(benchmark::State& state) {
    const auto n = static_cast<std::size_t>(state.range(0));
    std::vector<std::byte> from = pattern(n, 1), to(n);
    for (auto _ : state) {
        std::memcpy(to.data(), from.data(), n);
        benchmark::DoNotOptimize(to.data());
        benchmark::ClobberMemory();
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * n));
}

BENCHMARK(BM_MemcpyBaseline)->Arg(4096)->Arg(1 << 20);
BENCHMARK(BM_ModelSendStepped)->Arg(4096)->Arg(1 << 20);
BENCHMARK(BM_ModelSendThreaded)->Arg(4096)->Arg(1 << 20)->UseRealTime();

}  // namespace
}  // namespace rig::bnxt::sim::test

BENCHMARK_MAIN();
