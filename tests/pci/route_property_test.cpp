// Routes on random topologies, against a second reading of docs/p2pdma.md written here
// from the topology itself (no sysfs): the answers must agree for every pair, read whole
// and read as an unprivileged process, and forwards and distance must be symmetric.
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "../support/random_topology.hpp"
#include "../support/trees.hpp"
#include "rig/pci/machine.hpp"
#include "rig/pci/routes.hpp"

namespace rig::pci {
namespace {

using sim::Cpu;
using sim::FunctionRef;
using sim::HostBridgeRef;
using sim::Spec;
using sim::Topology;
using test::Generator;
using test::listed;
using test::Tree;

// docs/p2pdma.md read again, on the topology's own records.
class Reference {
public:
    Reference(const Topology& t, bool unprivileged) : t_(t), unprivileged_(unprivileged) {}

    std::vector<FunctionRef> way(FunctionRef f) const {
        std::vector<FunctionRef> w{f};
        const auto& from = t_[f].physfn ? t_[*t_[f].physfn] : t_[f];
        for (auto up = from.upstream; up; up = t_[*up].upstream) w.push_back(*up);
        return w;
    }

    Distance distance(FunctionRef p, FunctionRef c) const {
        if (p == c) return way(p).size() > 1 ? Distance::Switch : Distance::Bridge;
        for (const auto a : way(p))
            for (const auto b : way(c))
                if (a == b) return Distance::Switch;
        return t_[p].host_bridge.index == t_[c].host_bridge.index ? Distance::Bridge : Distance::System;
    }

    bool forwards(FunctionRef p, FunctionRef c) const {
        const auto wp = way(p), wc = way(c);
        for (std::size_t i = 0; i < wp.size(); ++i)
            for (std::size_t j = 0; j < wc.size(); ++j)
                if (wp[i] == wc[j]) {
                    if (unprivileged_) return root_complex(p, c);
                    bool redirect = false;
                    for (std::size_t k = 0; k <= i; ++k) redirect |= redirects(wp[k]);
                    for (std::size_t k = 0; k < j; ++k) redirect |= redirects(wc[k]);
                    return redirect ? root_complex(p, c) : true;
                }
        return root_complex(p, c);
    }

private:
    bool redirects(FunctionRef f) const { return (t_[f].spec.acs_control.value_or(0) & 0x2c) != 0; }

    bool root_complex(FunctionRef p, FunctionRef c) const {
        if (t_.cpu().vendor == "AuthenticAMD" && t_.cpu().family >= 0x17) return true;
        const auto hp = t_[p].host_bridge.index, hc = t_[c].host_bridge.index;
        if (hp == hc) return allowed(hp, true);
        return allowed(hp, false) && allowed(hc, false);
    }

    bool allowed(std::size_t host, bool same) const {
        std::optional<FunctionRef> first;
        for (std::size_t i = 0; i < t_.functions().size(); ++i) {
            const auto& f = t_.functions()[i];
            if (!f.root_bus || f.root_bus->index != host || f.physfn) continue;
            if (!first || f.address < t_[*first].address) first = FunctionRef{i};
        }
        if (!first) return false;
        const auto& f = t_[*first];
        const bool root_port = f.spec.port_type == config::PortType::RootPort;
        if (!(f.address.device == 0 && f.address.function == 0) && !root_port) return false;
        const auto entry = listed.find(f.spec.device_id);
        if (f.spec.vendor != 0x8086 || entry == listed.end() || !entry->second) return false;
        return same || !*entry->second;
    }

    const Topology& t_;
    bool unprivileged_;
};

TEST(RouteProperty, RandomTreesAgreeWithTheReferenceAndAreSymmetric) {
    int pairs = 0, forwarded = 0;
    for (unsigned seed = 1; seed <= 12; ++seed) {
        const Topology t = Generator(seed).build();
        for (const bool unprivileged : {false, true}) {
            const Tree tree(t, unprivileged ? std::optional<unsigned>(64) : std::nullopt);
            const Machine m = tree.machine();
            const Reference reference(t, unprivileged);
            const auto routes = Routes::read(m);
            ASSERT_TRUE(routes) << routes.error();
            for (std::size_t i = 0; i < t.functions().size(); ++i)
                for (std::size_t j = 0; j < t.functions().size(); ++j) {
                    const FunctionRef p{i}, c{j};
                    const std::string a = t.bus(p), b = t.bus(c);
                    SCOPED_TRACE("seed " + std::to_string(seed) + (unprivileged ? " unprivileged " : " ") + a + " <- " +
                                 b);
                    const Route r = m.route(a, b);
                    ASSERT_EQ(r.distance, reference.distance(p, c)) << r.explain();
                    ASSERT_EQ(r.forwards(), reference.forwards(p, c)) << r.explain();
                    ASSERT_EQ(m.forwards(b, a), r.forwards());
                    ASSERT_EQ(m.distance(b, a), r.distance);
                    // Routes, from ways read once, answers as Machine does pair by pair.
                    const auto ri = routes->find(a), rj = routes->find(b);
                    ASSERT_TRUE(ri && rj);
                    const Route once = routes->route(*ri, *rj);
                    ASSERT_EQ(once.verdict, r.verdict);
                    ASSERT_EQ(once.distance, r.distance);
                    ASSERT_EQ(once.common, r.common);
                    ASSERT_EQ(once.explain(), r.explain());
                    ASSERT_EQ(routes->verdict(*ri, *rj), r.verdict);
                    ASSERT_EQ(routes->distance(*ri, *rj), r.distance);
                    ++pairs;
                    forwarded += r.forwards();
                }
        }
    }
    // The generator must exercise both answers.
    EXPECT_GT(forwarded, pairs / 10);
    EXPECT_LT(forwarded, pairs - pairs / 10);
}

}  // namespace
}  // namespace rig::pci
