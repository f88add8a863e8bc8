// Topologies: bus numbering, placement rules and configuration spaces pinned to bytes
// worked out by hand from the PCI and PCI Express layouts (rig/sim/topology.hpp).
#include "rig/sim/topology.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

namespace rig::sim {
namespace {

using pci::config::PortType;

std::vector<std::uint8_t> slice(const std::vector<std::uint8_t>& bytes, std::size_t offset, std::size_t n) {
    return {bytes.begin() + static_cast<std::ptrdiff_t>(offset),
            bytes.begin() + static_cast<std::ptrdiff_t>(offset + n)};
}

using Bytes = std::vector<std::uint8_t>;

TEST(Topology, BridgesAreNumberedDepthFirst) {
    Topology t;
    const auto h = t.host_bridge(0, 0);
    const auto rp1 = t.add(h, Spec::root_port(1, 0, 0x8086, 0x2030));
    const auto usp = t.add(rp1, Spec::upstream_port(0x10b5, 0x8747));
    const auto d1 = t.add(usp, Spec::downstream_port(8, 0x10b5, 0x8747));
    const auto d2 = t.add(usp, Spec::downstream_port(0x10, 0x10b5, 0x8747));
    const auto rp2 = t.add(h, Spec::root_port(2, 0, 0x8086, 0x2030));
    const auto gpu = t.add(d2, Spec::endpoint(0, 0, 0x10de, 0x2335, 0x030200));
    EXPECT_EQ(t.bus(rp1), "0000:00:01.0");
    EXPECT_EQ(t.bus(usp), "0000:01:00.0");
    EXPECT_EQ(t.bus(d1), "0000:02:08.0");
    EXPECT_EQ(t.bus(d2), "0000:02:10.0");
    EXPECT_EQ(t.bus(gpu), "0000:04:00.0");
    EXPECT_EQ(*t[rp2].spec.secondary, 0x05);
    EXPECT_EQ(t.subordinate(rp1), 0x04);
    EXPECT_EQ(t.subordinate(usp), 0x04);
    EXPECT_EQ(t.subordinate(d1), 0x03);
    EXPECT_EQ(t.subordinate(rp2), 0x05);
    EXPECT_EQ(t.find("0000:04:00.0"), gpu);
    EXPECT_FALSE(t.find("0000:09:00.0"));
    EXPECT_EQ(t[gpu].upstream, d2);
    EXPECT_EQ(t[rp1].root_bus->index, h.index);
}

TEST(Topology, RootPortConfigSpaceIsPinnedByHand) {
    Topology t;
    const auto h = t.host_bridge(0, 0x40);
    auto spec = Spec::root_port(3, 1, 0x1022, 0x1483, 0x001d);
    spec.secondary = 0x41;
    const auto rp = t.add(h, spec);
    t.add(rp, Spec::endpoint(0, 0, 0x10de, 0x26b9, 0x030000));
    const Bytes c = t.config_space(rp);
    ASSERT_EQ(c.size(), 4096u);
    EXPECT_EQ(slice(c, 0x00, 4), (Bytes{0x22, 0x10, 0x83, 0x14}));   // vendor 1022, device 1483
    EXPECT_EQ(slice(c, 0x04, 4), (Bytes{0x06, 0x00, 0x10, 0x00}));   // memory + bus master; capability list
    EXPECT_EQ(slice(c, 0x09, 3), (Bytes{0x00, 0x04, 0x06}));         // class 0x060400
    EXPECT_EQ(c[0x0e], 0x01);                                        // type 1 header
    EXPECT_EQ(slice(c, 0x18, 3), (Bytes{0x40, 0x41, 0x41}));         // primary, secondary, subordinate
    EXPECT_EQ(c[0x34], 0x40);                                        // capabilities pointer
    EXPECT_EQ(slice(c, 0x40, 4), (Bytes{0x10, 0x00, 0x42, 0x00}));   // PCIe cap, end, v2 root port (4 << 4 | 2)
    EXPECT_EQ(slice(c, 0x100, 4), (Bytes{0x0d, 0x00, 0x01, 0x00}));  // ACS 0x000d, version 1, next 0
    EXPECT_EQ(slice(c, 0x104, 4), (Bytes{0x7f, 0x00, 0x1d, 0x00}));  // ACS capability 0x007f, control 0x001d
}

TEST(Topology, EndpointConfigSpaceIsPinnedByHand) {
    Topology t;
    const auto h = t.host_bridge(0, 0);
    auto spec = Spec::endpoint(2, 0, 0x14e4, 0x1750, 0x020000);
    spec.subsystem_vendor = 0x14e4;
    spec.subsystem_device = 0x2100;
    spec.bars[2] = BarSpec{0x4000, false, false};  // 16 KiB, 32-bit, not prefetchable
    const auto nic = t.add(h, spec);
    t.add(h, Spec::endpoint(2, 1, 0x14e4, 0x1750, 0x020000));
    const Bytes c = t.config_space(nic);
    EXPECT_EQ(c[0x0e], 0x80);  // type 0, multi-function: 02.1 shares the device
    // BAR0: 16 MiB 64-bit prefetchable at 0x40_0000_0000 (the allocator's first address).
    EXPECT_EQ(t[nic].bar_address[0], 0x40'0000'0000u);
    EXPECT_EQ(slice(c, 0x10, 8), (Bytes{0x0c, 0x00, 0x00, 0x00, 0x40, 0x00, 0x00, 0x00}));
    // BAR2: right after BAR0, 32-bit, memory, not prefetchable.
    EXPECT_EQ(t[nic].bar_address[2], 0x40'0100'0000u);
    EXPECT_EQ(slice(c, 0x18, 4), (Bytes{0x00, 0x00, 0x00, 0x01}));
    EXPECT_EQ(slice(c, 0x2c, 4), (Bytes{0xe4, 0x14, 0x00, 0x21}));
    EXPECT_EQ(slice(c, 0x40, 4), (Bytes{0x10, 0x00, 0x02, 0x00}));  // PCIe v2 endpoint
    EXPECT_EQ(slice(c, 0x100, 4), (Bytes{0, 0, 0, 0}));             // no extended capability
}

// PCIe 6.0 §7.5.3.6 LnkCap (capability + 0x0c): Max Link Speed bits 3:0, Maximum Link
// Width bits 9:4; §7.5.3.8 LnkSta (+ 0x12): Current Link Speed 3:0, Negotiated Width 9:4.
TEST(Topology, LinkRegistersArePinnedByHand) {
    Topology t;
    const auto h = t.host_bridge(0, 0);
    auto port = Spec::root_port(1, 0, 0x8086, 0x2030);
    port.link = {pci::Generation::Gen5, 16};
    const auto rp = t.add(h, port);
    auto gpu = Spec::endpoint(0, 0, 0x10de, 0x2335, 0x030200);
    gpu.trained = pci::LinkState{pci::Generation::Gen3, 8};
    const auto g = t.add(rp, gpu);
    const auto empty = t.add(h, Spec::root_port(2, 0, 0x8086, 0x2030));
    const Bytes p = t.config_space(rp), e = t.config_space(g), n = t.config_space(empty);
    EXPECT_EQ(slice(p, 0x4c, 4), (Bytes{0x05, 0x01, 0x00, 0x00}));  // LnkCap 32 GT/s x16: 5 | 16 << 4 = 0x105
    EXPECT_EQ(slice(p, 0x52, 2), (Bytes{0x83, 0x00}));              // LnkSta: its child's, 8 GT/s x8 = 0x83
    EXPECT_EQ(slice(e, 0x4c, 4), (Bytes{0x04, 0x01, 0x00, 0x00}));  // LnkCap 16 GT/s x16 (the default)
    EXPECT_EQ(slice(e, 0x52, 2), (Bytes{0x83, 0x00}));
    EXPECT_EQ(slice(n, 0x52, 2), (Bytes{0x00, 0x00}));  // nothing below: the link is down
    // Untrained: the lower of both ends.
    Topology u;
    const auto rp2 = u.add(u.host_bridge(0, 0), Spec::root_port(1, 0, 0x8086, 0x2030));
    auto fast = Spec::endpoint(0, 0, 0x10de, 0x2335, 0x030200);
    fast.link = {pci::Generation::Gen5, 8};
    const Bytes f = u.config_space(u.add(rp2, fast));
    EXPECT_EQ(slice(f, 0x52, 2), (Bytes{0x84, 0x00}));  // Gen4 (the port's) x8 (the card's)
}

TEST(Topology, ConventionalFunctionHasNoCapabilitiesAnd256Bytes) {
    Topology t;
    Spec spec = Spec::root_complex(0x8086, 0x29c0);
    const auto rc = t.add(t.host_bridge(0, 0), spec);
    const Bytes c = t.config_space(rc);
    EXPECT_EQ(slice(c, 0x06, 2), (Bytes{0x00, 0x00}));
    EXPECT_EQ(c[0x34], 0x00);
    EXPECT_EQ(t[rc].spec.config_bytes, 256u);
}

TEST(Topology, VfSitsOnItsPfsBusAndClimbsFromIt) {
    Topology t;
    const auto h = t.host_bridge(0, 0);
    const auto rp = t.add(h, Spec::root_port(1, 0, 0x8086, 0x2030));
    const auto pf = t.add(rp, Spec::endpoint(0, 0, 0x15b3, 0x1017, 0x020000));
    const auto vf = t.add_vf(pf, Spec::endpoint(0, 2, 0x15b3, 0x1018, 0x020000));
    const auto far = t.add_vf(pf, Spec::endpoint(0, 0, 0x15b3, 0x1018, 0x020000), 0x07);
    EXPECT_EQ(t.bus(vf), "0000:01:00.2");
    EXPECT_EQ(t.bus(far), "0000:07:00.0");
    EXPECT_EQ(t[vf].physfn, pf);
    EXPECT_EQ(t[vf].upstream, rp);
    EXPECT_EQ(t.vfs(pf), (std::vector<FunctionRef>{vf, far}));
    EXPECT_FALSE(t.multifunction(pf));  // VFs do not make the PF multi-function
    EXPECT_THROW(t.add_vf(vf, Spec::endpoint(0, 3, 0x15b3, 0x1018, 0x020000)), std::invalid_argument);
}

TEST(Topology, MisuseThrowsNamingTheFunction) {
    Topology t;
    const auto h = t.host_bridge(0, 0);
    const auto gpu = t.add(h, Spec::endpoint(1, 0, 0x10de, 0x2335, 0x030200));
    try {
        t.add(h, Spec::endpoint(1, 0, 0x10de, 0x2335, 0x030200));
        FAIL();
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("0000:00:01.0 is added twice"), std::string::npos) << e.what();
    }
    EXPECT_THROW(t.add(h, Spec::endpoint(0x20, 0, 1, 1, 0x020000)), std::invalid_argument);
    EXPECT_THROW(t.add(h, Spec::endpoint(2, 8, 1, 1, 0x020000)), std::invalid_argument);
    EXPECT_THROW(t.add(gpu, Spec::endpoint(0, 0, 1, 1, 0x020000)), std::invalid_argument);  // not a bridge
    EXPECT_THROW(t.host_bridge(0, 0), std::invalid_argument);                               // bus 00 in use
    auto rp = Spec::root_port(3, 0, 0x8086, 0x2030);
    rp.secondary = 0x00;
    EXPECT_THROW(t.add(h, rp), std::invalid_argument);
    Spec acs_without_express = Spec::root_complex(0x8086, 0x29c0);
    acs_without_express.device = 4;
    acs_without_express.acs_control = 0;
    EXPECT_THROW(t.add(h, acs_without_express), std::invalid_argument);
    auto small = Spec::endpoint(5, 0, 1, 1, 0x020000);
    small.config_bytes = 32;
    EXPECT_THROW(t.add(h, small), std::invalid_argument);
}

TEST(Topology, VmdHostBridgeKeepsItsFiveDigitDomain) {
    Topology t;
    const auto h = t.host_bridge(0, 0);
    const auto vmd = t.add(h, Spec::endpoint(0x0e, 0, 0x8086, 0x28c0, 0x010400));
    const auto v = t.vmd_host_bridge(vmd, 0x10000, 0xe0);
    const auto rp = t.add(v, Spec::root_port(6, 0, 0x8086, 0x347a));
    const auto ssd = t.add(rp, Spec::endpoint(0, 0, 0x144d, 0xa80a, 0x010802));
    EXPECT_EQ(t.bus(ssd), "10000:e1:00.0");
    EXPECT_EQ(t[v].vmd, vmd);
    EXPECT_EQ(t[ssd].host_bridge.index, v.index);
}

}  // namespace
}  // namespace rig::sim
