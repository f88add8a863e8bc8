// bench/topology/topology_bench.cpp: the cost of a pair's answer as machines grow, on sysfs
// trees written from simulated topologies of 50, 200, 1000 and 4000 endpoints.
//
// A machine of N endpoints: switches of four downstream ports (GPU, NIC, GPU, NIC), each
// below a root port of one of four host bridges, every NIC with SR-IOV VFs so that the
// endpoints number N (as servers with VFs have hundreds to thousands of functions).
//
//  routes/read/N      Routes::read: every function's way read once; time per endpoint
//                     in the per_endpoint counter.
//  routes/cell/N      a matrix cell (Routes::verdict and distance) for up to 200'000
//                     pairs, whole rows spread over the machine (pair_of); time per
//                     pair in per_pair.
//  routes/route/N     the whole explained Route (Routes::route) for up to 20'000 pairs.
//  machine/route/N    the baseline: Machine::route, which reads both ways anew for each
//                     pair (what rig topo did), for up to 2'000 pairs.
// per_pair may not grow by more than 2x from 50 to 4000 endpoints (issue 17). Read the
// CPU column (the machine's wall clock is shared).
#include <benchmark/benchmark.h>

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <filesystem>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "rig/pci/machine.hpp"
#include "rig/pci/names.hpp"
#include "rig/pci/routes.hpp"
#include "rig/sim/fixture.hpp"
#include "rig/sim/topology.hpp"

namespace {

namespace fs = std::filesystem;
using rig::sim::Spec;
using rig::sim::Topology;

constexpr unsigned endpoints_per_switch_min = 4;  // 2 GPUs, 2 NIC PFs

// Four host bridges (PCI domains 0-3, one per quarter of the machine) whatever the size,
// so that every size asks the same mix of pairs: a quarter below one host bridge, three
// quarters across two.
constexpr unsigned host_bridges = 4;

Topology machine_of(unsigned endpoints) {
    Topology t(rig::sim::Cpu::intel(0x8f));
    const unsigned switches = std::max(host_bridges, endpoints / 50);
    // Each switch: 2 GPUs, 2 NICs and their VFs; the VFs fill up to `endpoints`.
    const unsigned vfs_total = endpoints - switches * endpoints_per_switch_min;
    unsigned vfs_left = vfs_total;
    std::vector<rig::sim::HostBridgeRef> hosts;
    for (unsigned h = 0; h < host_bridges; ++h) {
        hosts.push_back(t.host_bridge(h, 0));
        t.add(hosts.back(), Spec::root_complex(0x8086, 0x09a2));
    }
    for (unsigned s = 0; s < switches; ++s) {
        // Switch s below root port s / 4 of host bridge s % 4; 6 bus numbers each.
        const unsigned port = s / host_bridges;
        const auto rp = t.add(hosts[s % host_bridges],
                              Spec::root_port(static_cast<std::uint8_t>(1 + port / 8),
                                              static_cast<std::uint8_t>(port % 8), 0x8086, 0x352a, 0x001d));
        const auto usp = t.add(rp, Spec::upstream_port(0x1000, 0xc030));
        for (std::uint8_t d = 0; d < 4; ++d) {
            const auto dsp = t.add(usp, Spec::downstream_port(d, 0x1000, 0xc030, 0x001d));
            if (d % 2 == 0) {
                t.add(dsp, Spec::endpoint(0, 0, 0x10de, 0x2330, 0x030200));
                continue;
            }
            const auto pf = t.add(dsp, Spec::endpoint(0, 0, 0x15b3, 0x101e, 0x020700));
            const unsigned nics_left = 2 * (switches - s) - (d == 1 ? 0 : 1);
            const unsigned vfs = vfs_left / nics_left;
            vfs_left -= vfs;
            for (unsigned v = 1; v <= vfs; ++v)  // 00.1 .. 1f.7 of the PF's bus
                t.add_vf(pf, Spec::endpoint(static_cast<std::uint8_t>(v / 8), static_cast<std::uint8_t>(v % 8), 0x15b3,
                                            0x101e, 0x020700));
        }
    }
    return t;
}

// One tree per size, written once, removed at exit.
struct Written {
    fs::path root;
    rig::pci::Machine machine;
    std::vector<std::string> endpoints;  // bus addresses of the functions that are no bridges
    ~Written() {
        std::error_code ec;
        fs::remove_all(root, ec);
    }
};

const Written& written(unsigned endpoints) {
    static std::map<unsigned, std::unique_ptr<Written>> trees;
    auto& slot = trees[endpoints];
    if (slot) return *slot;
    const fs::path root = fs::temp_directory_path() /
                          ("rig-bench-topology-" + std::to_string(endpoints) + "-" + std::to_string(::getpid()));
    if (auto r = rig::sim::write_sysfs(machine_of(endpoints), root); !r) throw std::runtime_error(r.error());
    auto m = rig::pci::Machine::at(root);
    std::vector<std::string> list;
    const auto ids = m.functions();
    if (!ids) throw std::runtime_error(ids.error());
    for (const auto& id : *ids)
        if (rig::pci::kind_of(id) != rig::pci::Kind::Bridge) list.push_back(id.bus);
    if (list.size() != endpoints)
        throw std::logic_error("bench_topology: the generator made " + std::to_string(list.size()) + " endpoints");
    slot.reset(new Written{root, m, std::move(list)});  // in place: a moved-from copy would remove the tree
    return *slot;
}

// The k-th of `count` pairs over n endpoints, row by row as rig topo and rank_nics ask
// them (one provider, then every client): every pair where n * n <= count, else count / n
// whole rows spread evenly over the providers.
std::pair<std::size_t, std::size_t> pair_of(std::size_t k, std::size_t n, std::size_t count) {
    if (n * n <= count) return {k / n, k % n};
    const std::size_t rows = std::max<std::size_t>(1, count / n);
    return {(k / n) % rows * (n / rows), k % n};
}

std::vector<std::size_t> indices(const rig::pci::Routes& routes, const Written& w) {
    std::vector<std::size_t> out;
    for (const auto& bus : w.endpoints) out.push_back(*routes.find(bus));
    return out;
}

void per_pair(benchmark::State& state, std::size_t pairs) {
    state.counters["per_pair"] = benchmark::Counter(
        static_cast<double>(pairs), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
    state.counters["pairs"] = static_cast<double>(pairs);
}

void routes_read(benchmark::State& state) {
    const Written& w = written(static_cast<unsigned>(state.range(0)));
    for (auto _ : state) {
        auto routes = rig::pci::Routes::read(w.machine);
        benchmark::DoNotOptimize(routes);
    }
    state.counters["per_endpoint"] =
        benchmark::Counter(static_cast<double>(w.endpoints.size()),
                           benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

void routes_cell(benchmark::State& state) {
    const Written& w = written(static_cast<unsigned>(state.range(0)));
    const auto routes = rig::pci::Routes::read(w.machine);
    if (!routes) throw std::runtime_error(routes.error());
    const auto at = indices(*routes, w);
    const std::size_t n = at.size(), count = std::min<std::size_t>(n * n, 200'000);
    for (auto _ : state)
        for (std::size_t k = 0; k < count; ++k) {
            const auto [p, c] = pair_of(k, n, count);
            benchmark::DoNotOptimize(routes->verdict(at[p], at[c]));
            benchmark::DoNotOptimize(routes->distance(at[p], at[c]));
        }
    per_pair(state, count);
}

void routes_route(benchmark::State& state) {
    const Written& w = written(static_cast<unsigned>(state.range(0)));
    const auto routes = rig::pci::Routes::read(w.machine);
    if (!routes) throw std::runtime_error(routes.error());
    const auto at = indices(*routes, w);
    const std::size_t n = at.size(), count = std::min<std::size_t>(n * n, 20'000);
    for (auto _ : state)
        for (std::size_t k = 0; k < count; ++k) {
            const auto [p, c] = pair_of(k, n, count);
            benchmark::DoNotOptimize(routes->route(at[p], at[c]));
        }
    per_pair(state, count);
}

void machine_route(benchmark::State& state) {
    const Written& w = written(static_cast<unsigned>(state.range(0)));
    const std::size_t n = w.endpoints.size(), count = std::min<std::size_t>(n * n, 2'000);
    for (auto _ : state)
        for (std::size_t k = 0; k < count; ++k) {
            const auto [p, c] = pair_of(k, n, count);
            benchmark::DoNotOptimize(w.machine.route(w.endpoints[p], w.endpoints[c]));
        }
    per_pair(state, count);
}

void sizes(benchmark::internal::Benchmark* b) {
    for (const int n : {50, 200, 1000, 4000}) b->Arg(n);
    b->Unit(benchmark::kMillisecond);
}

BENCHMARK(routes_read)->Name("routes/read")->Apply(sizes)->Iterations(1);
BENCHMARK(routes_cell)->Name("routes/cell")->Apply(sizes);
BENCHMARK(routes_route)->Name("routes/route")->Apply(sizes);
BENCHMARK(machine_route)->Name("machine/route")->Apply(sizes)->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
