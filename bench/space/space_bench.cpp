// bench/space/space_bench.cpp: rig::Space against drm_mm-style best fit (bench/baseline),
// row for row in one run: space/... rows are rig, map/... rows the baseline.
//
//  <x>/alloc-free/<size>/<F>-free: allocate `size` bytes and free them, in a space of
//      base 2^44 and length 2^44 holding F free ranges of 2 * size apart (2F ranges of
//      2 * size allocated in a row, every other one freed), F = 16, 4096, 262144 where
//      the space has room.
//  <x>/alloc-free-misaligned/<size>/<F>-free: the same, but the F free ranges are
//      1.25 * size long and start at size / 2 past a multiple of size, so none holds a
//      size-aligned run of size: the range must come from the free tail.
//  <x>/churn: 1024 steps over 64 slots, each freeing its slot's range if it holds one,
//      else allocating one of {4K, 16K, 64K, 256K, 1M, 2M, 8M, 64M}; one iteration is
//      the whole churn plus freeing what is left.
//  <x>/churn-mt/threads:2: that churn from two threads at once on one shared space.
// Read the CPU column (the machine's wall clock is shared); run with
// --benchmark_repetitions=5 --benchmark_report_aggregates_only=true for medians.
#include "best_fit.hpp"
#include "rig/space.hpp"

#include <benchmark/benchmark.h>

#include <array>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

constexpr std::int64_t base = std::int64_t{1} << 44;
constexpr std::int64_t length = std::int64_t{1} << 44;
constexpr std::int64_t KiB = 1024;
constexpr std::int64_t MiB = 1024 * KiB;

// rig: a Space; each user of it is a Holder.
struct Rig {
    struct Pool {
        rig::Space space{base, length};
    };
    struct User {
        rig::Holder holder;
    };
    using Handle = rig::Hold;
    static std::optional<Handle> alloc(Pool& pool, User& user, std::int64_t n, std::int64_t align = 4096) {
        return rig::alloc(pool.space, user.holder, n, align);
    }
    static void free(Pool&, const Handle& handle) { rig::free(handle); }
};

// The baseline: one best-fit allocator; users need nothing of their own.
struct Map {
    struct Pool {
        rig::bench::BestFit fit{base, length};
    };
    struct User {};
    using Handle = rig::bench::BestFit::Node;
    static std::optional<Handle> alloc(Pool& pool, User&, std::int64_t n, std::int64_t align = 4096) {
        return pool.fit.alloc(n, align);
    }
    static void free(Pool& pool, const Handle& handle) { pool.fit.free(handle); }
};

template <class A>
typename A::Handle must(std::optional<typename A::Handle> handle) {
    if (!handle) throw std::runtime_error("bench_space: the allocator ran out of room while setting up");
    return *handle;
}

// F free ranges of 2 * size, apart.
template <class A>
void make_free_ranges(typename A::Pool& pool, typename A::User& user, std::int64_t size, std::int64_t free_ranges,
                      std::vector<typename A::Handle>& kept) {
    std::vector<typename A::Handle> all;
    for (std::int64_t i = 0; i < 2 * free_ranges; ++i) all.push_back(must<A>(A::alloc(pool, user, 2 * size)));
    for (std::int64_t i = 0; i < 2 * free_ranges; ++i) {
        if (i % 2 == 0) A::free(pool, all[i]);
        else kept.push_back(all[i]);
    }
}

// F free ranges of 1.25 * size at size / 2 past a multiple of size. In quarters u of
// size, each period of 8u is allocated as [0, 2u) [2u, 4u) [4u, 6u) [6u, 7u) [7u, 8u), in
// a row (each piece aligned to its own size, so both allocators place them in order);
// then the middle three are freed and merge into the hole [2u, 7u).
template <class A>
void make_misaligned_free_ranges(typename A::Pool& pool, typename A::User& user, std::int64_t size,
                                 std::int64_t free_ranges, std::vector<typename A::Handle>& kept) {
    const std::int64_t u = size / 4;
    std::vector<typename A::Handle> holes;
    for (std::int64_t i = 0; i < free_ranges; ++i) {
        kept.push_back(must<A>(A::alloc(pool, user, 2 * u, 1)));
        holes.push_back(must<A>(A::alloc(pool, user, 2 * u, 1)));
        holes.push_back(must<A>(A::alloc(pool, user, 2 * u, 1)));
        holes.push_back(must<A>(A::alloc(pool, user, u, 1)));
        kept.push_back(must<A>(A::alloc(pool, user, u, 1)));
    }
    for (const auto& hole : holes) A::free(pool, hole);
}

template <class A>
void alloc_free(benchmark::State& state, std::int64_t size, std::int64_t free_ranges, bool misaligned) {
    typename A::Pool pool;
    typename A::User user;
    std::vector<typename A::Handle> kept;
    if (misaligned) make_misaligned_free_ranges<A>(pool, user, size, free_ranges, kept);
    else make_free_ranges<A>(pool, user, size, free_ranges, kept);
    for (auto _ : state) {
        auto handle = A::alloc(pool, user, size);
        if (!handle) {
            state.SkipWithError("alloc failed");
            break;
        }
        A::free(pool, *handle);
        benchmark::DoNotOptimize(handle);
    }
    for (const auto& handle : kept) A::free(pool, handle);
}

constexpr int churn_steps = 1024;
constexpr std::size_t churn_slots = 64;
constexpr std::array<std::int64_t, 8> churn_sizes{4 * KiB, 16 * KiB, 64 * KiB, 256 * KiB,
                                                  1 * MiB, 2 * MiB,  8 * MiB,  64 * MiB};

struct ChurnStep {
    std::size_t slot;
    std::int64_t size;
};

// The same pseudo-random steps every iteration (xorshift64, a fixed seed per thread).
std::vector<ChurnStep> churn_plan(std::uint64_t seed) {
    std::vector<ChurnStep> plan;
    std::uint64_t x = seed;
    for (int i = 0; i < churn_steps; ++i) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        plan.push_back({static_cast<std::size_t>(x % churn_slots), churn_sizes[(x >> 32) % churn_sizes.size()]});
    }
    return plan;
}

template <class A>
void churn_on(benchmark::State& state, typename A::Pool& pool, std::uint64_t seed) {
    typename A::User user;
    const std::vector<ChurnStep> plan = churn_plan(seed);
    std::array<std::optional<typename A::Handle>, churn_slots> slots;
    for (auto _ : state) {
        for (const ChurnStep& step : plan) {
            auto& slot = slots[step.slot];
            if (slot) {
                A::free(pool, *slot);
                slot.reset();
            } else {
                slot = A::alloc(pool, user, step.size);
            }
        }
        for (auto& slot : slots) {
            if (slot) A::free(pool, *slot);
            slot.reset();
        }
    }
    state.SetItemsProcessed(state.iterations() * churn_steps);
}

template <class A>
void churn(benchmark::State& state) {
    typename A::Pool pool;
    churn_on<A>(state, pool, 0x9e3779b97f4a7c15);
}

template <class A>
void churn_mt(benchmark::State& state) {
    static typename A::Pool shared;  // one space for both threads, for the whole run
    churn_on<A>(state, shared, 0x9e3779b97f4a7c15 + static_cast<std::uint64_t>(state.thread_index()));
}

std::string size_name(std::int64_t size) {
    return size >= MiB ? std::to_string(size / MiB) + "MiB" : std::to_string(size / KiB) + "KiB";
}

// Each rig row, then the same row of the baseline.
void register_rows() {
    for (bool misaligned : {false, true}) {
        for (std::int64_t size : {4 * KiB, 2 * MiB, 256 * MiB}) {
            for (std::int64_t free_ranges : {16, 4096, 262144}) {
                if (4 * size * free_ranges > length) continue;  // no room
                const std::string row = (misaligned ? "/alloc-free-misaligned/" : "/alloc-free/") + size_name(size) +
                                        "/" + std::to_string(free_ranges) + "-free";
                benchmark::RegisterBenchmark(("space" + row).c_str(), alloc_free<Rig>, size, free_ranges, misaligned);
                benchmark::RegisterBenchmark(("map" + row).c_str(), alloc_free<Map>, size, free_ranges, misaligned);
            }
        }
    }
    benchmark::RegisterBenchmark("space/churn", churn<Rig>);
    benchmark::RegisterBenchmark("map/churn", churn<Map>);
    benchmark::RegisterBenchmark("space/churn-mt", churn_mt<Rig>)->Threads(2);
    benchmark::RegisterBenchmark("map/churn-mt", churn_mt<Map>)->Threads(2);
}

}  // namespace

int main(int argc, char** argv) {
    register_rows();
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
