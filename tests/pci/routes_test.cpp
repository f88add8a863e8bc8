// Routes (rig/pci/routes.hpp): every way read once, each pair answered as Machine::route
// answers it; lookups, links, NUMA nodes and misuse.
#include <gtest/gtest.h>

#include <stdexcept>

#include "../support/trees.hpp"
#include "rig/pci/routes.hpp"
#include "rig/pci/transport.hpp"

namespace rig::pci {
namespace {

using test::OneSwitch;
using test::Tree;

TEST(Routes, EveryPairAnswersAsMachineRoute) {
    OneSwitch s;
    s.downstream_acs = 0x001d;
    s.gpu_trained = LinkState{Generation::Gen3, 8};
    const Tree tree(s.build());
    const Machine m = tree.machine();
    const auto routes = Routes::read(m);
    ASSERT_TRUE(routes) << routes.error();
    const auto ids = m.functions();
    ASSERT_TRUE(ids);
    ASSERT_EQ(routes->functions(), *ids);
    for (std::size_t p = 0; p < ids->size(); ++p)
        for (std::size_t c = 0; c < ids->size(); ++c) {
            const Route a = m.route((*ids)[p].bus, (*ids)[c].bus), b = routes->route(p, c);
            EXPECT_EQ(b.explain(), a.explain());
            EXPECT_EQ(b.links.size(), a.links.size());
            EXPECT_EQ(b.bottleneck, a.bottleneck);
            EXPECT_EQ(routes->verdict(p, c), a.verdict);
            EXPECT_EQ(routes->distance(p, c), a.distance);
        }
}

TEST(Routes, FindLinkAndNumaOfEachFunction) {
    OneSwitch s;
    s.gpu_trained = LinkState{Generation::Gen3, 8};
    const Tree tree(s.build());
    const auto routes = Routes::read(tree.machine());
    ASSERT_TRUE(routes);
    const auto gpu = routes->find("0000:03:00.0");
    ASSERT_TRUE(gpu);
    EXPECT_EQ(routes->functions()[*gpu].bus, "0000:03:00.0");
    EXPECT_EQ(routes->link(*gpu).status, (LinkState{Generation::Gen3, 8}));
    EXPECT_EQ(routes->numa_node(*gpu), -1);
    EXPECT_FALSE(routes->find("0000:09:00.0"));
    EXPECT_FALSE(routes->find("not a bus"));
}

TEST(Routes, AnIndexPastTheFunctionsThrowsNamingIt) {
    const Tree tree(OneSwitch{}.build());
    const auto routes = Routes::read(tree.machine());
    ASSERT_TRUE(routes);
    const std::size_t n = routes->functions().size();
    try {
        (void)routes->route(0, n);
        FAIL() << "no throw";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find(std::to_string(n)), std::string::npos) << e.what();
    }
    EXPECT_THROW((void)routes->verdict(n, 0), std::invalid_argument);
    EXPECT_THROW((void)routes->link(n), std::invalid_argument);
}

TEST(Routes, AMachineWithoutSysfsFilesIsAnError) {
    class NoOps : public Ops {
        std::optional<std::string> failed() const override { return std::nullopt; }
        std::uint64_t page() const override { return 4096; }
        Result<std::vector<Id>> functions() override { return std::vector<Id>{}; }
        Result<std::unique_ptr<FunctionOps>> take(std::string_view) override { return fail("no"); }
        Result<void> reserve(std::uintptr_t, std::uint64_t) override { return {}; }
    };
    const auto routes = Routes::read(Machine::make("far:7000", std::make_shared<NoOps>()));
    ASSERT_FALSE(routes);
    EXPECT_NE(routes.error().find("far:7000"), std::string::npos) << routes.error();
}

}  // namespace
}  // namespace rig::pci
