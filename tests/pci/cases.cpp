// The case machines (cases.hpp), each drawn from its file of tests/pci/cases/.
#include "cases.hpp"

namespace rig::test::cases {

using sim::Cpu;
using sim::FunctionRef;
using sim::Spec;
using sim::Topology;

Spec with_numa(Spec s, int node) {
    s.numa_node = node;
    return s;
}

// 01: DGX A100, AMD EPYC Rome, Broadcom PEX Gen4 switches in two levels, ConnectX-6.
Topology dgx_a100(std::optional<std::uint16_t> acs) {
    Topology t(Cpu::amd(0x17));
    const auto h0 = t.host_bridge(0, 0x00);
    t.add(h0, Spec::root_complex(0x1022, 0x1480));
    auto rp = Spec::root_port(1, 1, 0x1022, 0x1483, acs);
    const auto port = t.add(h0, rp);                                                 // [01]
    const auto outer = t.add(port, Spec::upstream_port(0x1000, 0xc010));             // 01:00.0 [02]
    const auto d_gpu = t.add(outer, Spec::downstream_port(0, 0x1000, 0xc010, acs));  // 02:00.0 [03]
    const auto sw1 = t.add(d_gpu, Spec::upstream_port(0x1000, 0xc010));              // 03:00.0 [04]
    const auto d1 = t.add(sw1, Spec::downstream_port(0, 0x1000, 0xc010, acs));       // 04:00.0 [05]
    const auto sw2 = t.add(d1, Spec::upstream_port(0x1000, 0xc010));                 // 05:00.0 [06]
    const auto d2 = t.add(sw2, Spec::downstream_port(0, 0x1000, 0xc010, acs));       // 06:00.0 [07]
    t.add(d2, Spec::endpoint(0, 0, 0x10de, 0x20b0, 0x030200));                       // GPU0 07:00.0
    auto d_nic = Spec::downstream_port(4, 0x1000, 0xc010, acs);
    d_nic.secondary = 0x0a;
    const auto sib = t.add(t.add(outer, d_nic), Spec::upstream_port(0x1000, 0xc010));  // 0a:00.0 [0b]
    const auto d3 = t.add(sib, Spec::downstream_port(0, 0x1000, 0xc010, acs));         // 0b:00.0 [0c]
    t.add(d3, Spec::endpoint(0, 0, 0x15b3, 0x101b, 0x020700));                         // mlx5_0 0c:00.0
    const auto h6 = t.host_bridge(0, 0x60);
    t.add(h6, Spec::root_complex(0x1022, 0x1480));
    const auto rp6 = t.add(h6, Spec::root_port(3, 1, 0x1022, 0x1483, acs));  // [61]
    t.add(rp6, Spec::endpoint(0, 0, 0x15b3, 0x101b, 0x020700));              // mlx5_4 61:00.0
    t.add(rp6, Spec::endpoint(0, 1, 0x15b3, 0x101b, 0x020700));              // mlx5_5 61:00.1
    return t;
}

// 03: 8x H100 SXM, 9 NICs; one PCIe switch per GPU/NIC rail on its own host bridge
// (Sapphire Rapids: 8086:09a2 first on every root bus); NIC0 alone on socket 1.
Topology h100_nine_nics(Cpu cpu) {
    Topology t(std::move(cpu));
    // GPUi pairs with NIC(8 - i): GPU0-NIC8 ... GPU3-NIC5 on socket 0, GPU4-NIC4 ... GPU7-NIC1 on socket 1.
    const std::uint8_t roots[8] = {0x15, 0x37, 0x48, 0x59, 0x97, 0xb8, 0xc9, 0xda};
    for (int i = 0; i < 8; ++i) {
        const int numa = i < 4 ? 0 : 1;
        const auto h = t.host_bridge(0, roots[i]);
        t.add(h, Spec::root_complex(0x8086, 0x09a2));
        const auto rp = t.add(h, Spec::root_port(1, 0, 0x8086, 0x352a, 0x001d));
        const auto usp = t.add(rp, Spec::upstream_port(0x1000, 0xc030));
        const auto dg = t.add(usp, Spec::downstream_port(0, 0x1000, 0xc030, 0x001d));
        const auto dn = t.add(usp, Spec::downstream_port(1, 0x1000, 0xc030, 0x001d));
        t.add(dg, with_numa(Spec::endpoint(0, 0, 0x10de, 0x2330, 0x030200), numa));  // GPUi at rr+3:00.0
        t.add(dn, with_numa(Spec::endpoint(0, 0, 0x15b3, 0x1021, 0x020700), numa));  // its NIC at rr+4:00.0
    }
    const auto h = t.host_bridge(0, 0xe0);
    t.add(h, Spec::root_complex(0x8086, 0x09a2));
    t.add(t.add(h, Spec::root_port(1, 0, 0x8086, 0x352a)),
          with_numa(Spec::endpoint(0, 0, 0x15b3, 0x1017, 0x020000), -1));
    return t;
}

// 05: 8x V100 PCIe behind PLX switches with a ConnectX-5 and its VFs (Skylake-SP stack
// whose first device is root port 8086:2030).
Topology v100_sriov(std::uint16_t host_device, std::optional<std::uint16_t> acs, std::optional<std::uint16_t> vf_acs) {
    Topology t(Cpu::intel());
    const auto h = t.host_bridge(0, 0x58);
    auto rp = Spec::root_port(0, 0, 0x8086, host_device);
    rp.acs_control = acs;
    const auto port = t.add(h, rp);                                     // 58:00.0 [59]
    const auto usp = t.add(port, Spec::upstream_port(0x10b5, 0x9765));  // 59:00.0 [5a]
    auto dn = Spec::downstream_port(4, 0x10b5, 0x9765, acs);
    dn.secondary = 0x5b;
    const auto d_nic = t.add(usp, dn);
    auto g1 = Spec::downstream_port(8, 0x10b5, 0x9765, acs);
    g1.secondary = 0x5c;
    g1.subordinate = 0x5f;
    auto g2 = Spec::downstream_port(0x0c, 0x10b5, 0x9765, acs);
    g2.secondary = 0x60;
    g2.subordinate = 0x63;
    t.add(t.add(usp, g1), Spec::endpoint(0, 0, 0x10de, 0x1db6, 0x030200));         // 5c:00.0
    t.add(t.add(usp, g2), Spec::endpoint(0, 0, 0x10de, 0x1db6, 0x030200));         // 60:00.0
    const auto pf = t.add(d_nic, Spec::endpoint(0, 0, 0x15b3, 0x1017, 0x020000));  // 5b:00.0
    const std::pair<std::uint8_t, std::uint8_t> vfs[] = {{3, 4}, {3, 5}, {3, 6}, {3, 7}, {4, 0}, {4, 1}};
    for (const auto& [device, function] : vfs) {
        auto vf = Spec::endpoint(device, function, 0x15b3, 0x1018, 0x020000);
        vf.acs_control = vf_acs;
        t.add_vf(pf, vf);
    }
    return t;
}

// 11: QEMU q35 guest, 8x H200 and 8x ConnectX-7 each on its own root port; a second
// configuration with an emulated TI XIO3130 switch.
Topology q35(Cpu cpu) {
    Topology t(std::move(cpu));
    const auto h = t.host_bridge(0, 0);
    t.add(h, Spec::root_complex(0x8086, 0x29c0));
    // Root ports 01.0-02.3 on buses 01-0c: virtio and XHCI below 01.0-01.3, GPUs below
    // 01.4-02.3 (buses 05-0c); NICs from 02.4 (bus 0d).
    for (int slot = 0; slot < 12; ++slot) {
        auto rp = Spec::root_port(static_cast<std::uint8_t>(1 + slot / 8), static_cast<std::uint8_t>(slot % 8), 0x1b36,
                                  0x000c);
        rp.secondary = static_cast<std::uint8_t>(slot + 1);
        const auto port = t.add(h, rp);
        t.add(port, slot < 4 ? Spec::endpoint(0, 0, 0x1af4, 0x1041, 0x020000)
                             : Spec::endpoint(0, 0, 0x10de, 0x2335, 0x030200));
    }
    auto rp = Spec::root_port(2, 4, 0x1b36, 0x000c);  // 02.4: the first ConnectX-7
    rp.secondary = 0x0d;
    t.add(t.add(h, rp), Spec::endpoint(0, 0, 0x15b3, 0x1021, 0x020700));
    // Second configuration: an emulated switch below another root port.
    auto sp = Spec::root_port(4, 0, 0x1b36, 0x000c);
    sp.secondary = 0x65;
    const auto usp = t.add(t.add(h, sp), Spec::upstream_port(0x104c, 0x8232));  // 65:00.0 [66]
    t.add(t.add(usp, Spec::downstream_port(0, 0x104c, 0x8233)), Spec::endpoint(0, 0, 0x15b3, 0x1021, 0x020700));  // 67
    t.add(t.add(usp, Spec::downstream_port(1, 0x104c, 0x8233)), Spec::endpoint(0, 0, 0x10de, 0x2335, 0x030200));  // 68
    return t;
}

// 13: Azure NDv4 (AMD EPYC guest) and NDv2 (Intel Skylake guest): Hyper-V vPCI, one
// domain and host bridge per device below VMBus.
Topology hyperv(Cpu cpu, const std::vector<std::pair<std::uint32_t, Spec>>& devices) {
    Topology t(std::move(cpu));
    int n = 0;
    for (const auto& [domain, spec] : devices) {
        const auto h = t.host_bridge(domain, 0,
                                     "LNXSYSTM:00/LNXSYBUS:00/ACPI0004:00/VMBUS:00/47505500-000" + std::to_string(n++) +
                                         "-0000-3130-444531303244");
        t.add(h, spec);
    }
    return t;
}

// 15: 3x Tesla K80 (two GK210 each behind a PEX 8747) on 2x Haswell-EP.
Topology k80_haswell(std::optional<std::uint16_t> acs) {
    Topology t(Cpu::intel(0x3f));
    const auto h0 = t.host_bridge(0, 0);
    t.add(h0, Spec::root_complex(0x8086, 0x2f00));
    auto r0 = Spec::root_port(2, 0, 0x8086, 0x2f04);
    r0.secondary = 0x03;
    const auto a = t.add(t.add(h0, r0), Spec::upstream_port(0x10b5, 0x8747));  // 03:00.0 [04]
    t.add(t.add(a, Spec::downstream_port(0x08, 0x10b5, 0x8747, acs)),
          Spec::endpoint(0, 0, 0x10de, 0x102d, 0x030200));  // 05
    t.add(t.add(a, Spec::downstream_port(0x10, 0x10b5, 0x8747, acs)),
          Spec::endpoint(0, 0, 0x10de, 0x102d, 0x030200));  // 06
    const auto h1 = t.host_bridge(0, 0x80);
    t.add(h1, Spec::root_complex(0x8086, 0x2f01));
    for (const std::uint8_t usp_bus : {std::uint8_t{0x82}, std::uint8_t{0x86}}) {
        auto rp = Spec::root_port(usp_bus == 0x82 ? 2 : 3, 0, 0x8086, 0x2f04);
        rp.secondary = usp_bus;
        const auto usp = t.add(t.add(h1, rp), Spec::upstream_port(0x10b5, 0x8747));
        t.add(t.add(usp, Spec::downstream_port(0x08, 0x10b5, 0x8747, acs)),
              Spec::endpoint(0, 0, 0x10de, 0x102d, 0x030200));
        t.add(t.add(usp, Spec::downstream_port(0x10, 0x10b5, 0x8747, acs)),
              Spec::endpoint(0, 0, 0x10de, 0x102d, 0x030200));
    }
    return t;
}

// 17: Hygon CPU, Hygon DCUs behind on-card bridges behind two levels of Broadcom PEX.
Hygon hygon_dcus(int acs_on) {
    Hygon h;
    Topology& t = h.t;
    const auto hb = t.host_bridge(0, 0x30);
    t.add(hb, Spec::root_complex(0x1d94, 0x1450));
    const auto acs = [&](int index) {
        return acs_on == index ? std::optional<std::uint16_t>(0x001d) : std::optional<std::uint16_t>(0);
    };
    auto rp = Spec::root_port(1, 1, 0x1d94, 0x1453);
    rp.secondary = 0x31;
    const auto outer = t.add(t.add(hb, rp), Spec::upstream_port(0x1000, 0xc010));  // 31:00.0 [32]
    auto xx = Spec::downstream_port(0, 0x1000, 0xc010, acs(9));
    xx.secondary = 0x33;
    h.above = t.add(outer, xx);
    auto usp = Spec::upstream_port(0x1000, 0xc010);
    usp.acs_control = acs(4);
    const auto inner = t.add(h.above, usp);  // 33:00.0 [34]
    h.nodes[4] = inner;
    auto yy = Spec::downstream_port(1, 0x1000, 0xc010, acs(3));
    yy.secondary = 0x35;
    h.nodes[3] = t.add(inner, yy);
    auto ww = Spec::downstream_port(2, 0x1000, 0xc010, acs(8));
    ww.secondary = 0x38;
    h.nodes[8] = t.add(inner, ww);
    const auto card = [&](FunctionRef port, std::uint8_t bus, int usp_index, int dsp_index, int dcu_index) {
        auto card_usp = Spec::upstream_port(0x1d94, 0x23b7);
        card_usp.acs_control = acs(usp_index);
        card_usp.secondary = static_cast<std::uint8_t>(bus + 1);
        h.nodes[usp_index] = t.add(port, card_usp);
        auto card_dsp = Spec::downstream_port(0, 0x1d94, 0x23b7, acs(dsp_index));
        card_dsp.secondary = static_cast<std::uint8_t>(bus + 2);
        h.nodes[dsp_index] = t.add(h.nodes[usp_index], card_dsp);
        auto dcu = Spec::endpoint(0, 0, 0x1d94, 0x55b7, 0x038000);
        dcu.acs_control = acs(dcu_index);
        h.nodes[dcu_index] = t.add(h.nodes[dsp_index], dcu);
    };
    card(h.nodes[3], 0x35, 2, 1, 0);  // 35:00.0 -> 36:00.0 -> 37:00.0
    card(h.nodes[8], 0x38, 7, 6, 5);  // 38:00.0 -> 39:00.0 -> 3a:00.0
    auto other = Spec::root_port(1, 2, 0x1d94, 0x1453);
    other.secondary = 0x40;
    t.add(t.add(hb, other), Spec::endpoint(0, 0, 0x15b3, 0x1017, 0x020000));  // 40:00.0
    return h;
}

// 19: 8 PCIe GPUs, two per switch, two switches per socket on one host bridge per socket.
Topology eight_gpus(std::uint16_t first, std::uint16_t second, std::optional<std::uint16_t> acs) {
    Topology t(Cpu::intel());
    const std::pair<std::uint8_t, std::uint16_t> sockets[] = {{0x00, first}, {0x80, second}};
    for (const auto& [root, id] : sockets) {
        const auto h = t.host_bridge(0, root);
        t.add(h, Spec::root_complex(0x8086, id));
        for (const std::uint8_t slot : {std::uint8_t{2}, std::uint8_t{3}}) {
            const auto usp =
                t.add(t.add(h, Spec::root_port(slot, 0, 0x8086, 0x6f04)), Spec::upstream_port(0x10b5, 0x8747));
            for (const std::uint8_t port : {std::uint8_t{8}, std::uint8_t{0x10}})
                t.add(t.add(usp, Spec::downstream_port(port, 0x10b5, 0x8747, acs)),
                      Spec::endpoint(0, 0, 0x10de, 0x1b06, 0x030000));
        }
    }
    return t;
}

// 07: 2x RTX 5880 Ada on AMD Zen 2 under two host bridges, root ports with ACSCtl 0x001d.
Topology rtx5880_amd() {
    Topology t(Cpu::amd(0x17));
    for (const std::uint8_t root : {std::uint8_t{0x40}, std::uint8_t{0x60}}) {
        const auto h = t.host_bridge(0, root);
        t.add(h, Spec::root_complex(0x1022, 0x1480));
        t.add(t.add(h, Spec::root_port(3, 1, 0x1022, 0x1483, 0x001d)), Spec::endpoint(0, 0, 0x10de, 0x26b9, 0x030000));
    }
    return t;
}

// 09: Threadripper PRO 3975WX on WRX80: four host bridges, one on-board switch.
Topology wrx80() {
    Topology t(Cpu::amd(0x17));
    const auto h0 = t.host_bridge(0, 0x00);
    t.add(h0, Spec::root_complex(0x1022, 0x1480));
    const auto p1 = t.add(h0, Spec::root_port(1, 1, 0x1022, 0x1483));  // [01]
    auto p3 = Spec::root_port(3, 1, 0x1022, 0x1483);
    p3.secondary = 0x02;
    const auto p2 = t.add(h0, p3);
    for (const auto port : {p1, p2}) {
        t.add(port, with_numa(Spec::endpoint(0, 0, 0x10de, 0x2204, 0x030000), 0));
        t.add(port, with_numa(Spec::endpoint(0, 1, 0x10de, 0x1aef, 0x040300), 0));
    }
    for (const std::uint8_t root : {std::uint8_t{0x20}, std::uint8_t{0x40}}) {
        const auto h = t.host_bridge(0, root);
        t.add(h, Spec::root_complex(0x1022, 0x1480));
        t.add(t.add(h, Spec::root_port(7, 1, 0x1022, 0x1484)), Spec::endpoint(0, 0, 0x1022, 0x148a, 0x130000));
    }
    const auto h6 = t.host_bridge(0, 0x60);
    t.add(h6, Spec::root_complex(0x1022, 0x1480));
    auto rp = Spec::root_port(3, 1, 0x1022, 0x1483);
    rp.subordinate = 0x67;
    const auto usp = t.add(t.add(h6, rp), Spec::upstream_port(0x1022, 0x57ad));  // 61:00.0 [62]
    t.add(t.add(usp, Spec::downstream_port(2, 0x1022, 0x57a3)), Spec::endpoint(0, 0, 0x10de, 0x2204, 0x030000));  // 63
    t.add(t.add(usp, Spec::downstream_port(4, 0x1022, 0x57a3)), Spec::endpoint(0, 0, 0x10de, 0x2204, 0x030000));  // 64
    return t;
}

// 21: MI50 GPUs with an on-package switch on AMD EPYC Rome.
Topology mi50_epyc() {
    Topology t(Cpu::amd(0x17));
    std::vector<sim::HostBridgeRef> hosts;
    for (const std::uint8_t root : {std::uint8_t{0xa0}, std::uint8_t{0xe0}}) {
        const auto h = t.host_bridge(0, root);
        hosts.push_back(h);
        t.add(h, Spec::root_complex(0x1022, 0x1480));
        const auto usp = t.add(t.add(h, Spec::root_port(3, 1, 0x1022, 0x1483)), Spec::upstream_port(0x1002, 0x14a0));
        const auto dsp = t.add(usp, Spec::downstream_port(0, 0x1002, 0x14a1));
        t.add(dsp, Spec::endpoint(0, 0, 0x1002, 0x66a1, 0x038000));  // root+3:00.0
        t.add(dsp, Spec::endpoint(0, 1, 0x1002, 0xab20, 0x040300));  // its audio function
    }
    auto rp = Spec::root_port(5, 1, 0x1022, 0x1483);  // e0:05.1 [e4-e9]
    rp.secondary = 0xe4;
    rp.subordinate = 0xe9;
    t.add(t.add(hosts[1], rp), Spec::endpoint(0, 0, 0x14e4, 0x1750, 0x020000));  // e4:00.0
    return t;
}

std::vector<Case> all() {
    const Spec gpu = Spec::endpoint(0, 0, 0x10de, 0x20b0, 0x030200),
               ib = Spec::endpoint(0, 0, 0x15b3, 0x101c, 0x020700);
    std::vector<Case> cases;
    cases.push_back({"01-dgx-a100-nccl-xml", dgx_a100(0x001d)});
    cases.push_back({"03-h100-9nic-mgmt-nic-sys", h100_nine_nics(Cpu::intel(0x8f))});
    cases.push_back({"05-v100-plx-cx5-sriov-vfs", v100_sriov(0x2030, 0x001d, std::nullopt)});
    cases.push_back({"07-2x-rtx5880-amd-acs-node", rtx5880_amd()});
    cases.push_back({"09-wrx80-four-host-bridges", wrx80()});
    cases.push_back({"11-h200-qemu-q35-vm", q35(Cpu::intel())});
    cases.push_back({"13-azure-ndv4-ndv2-hyperv", hyperv(Cpu::amd(23), {{0x0003, gpu}, {0x0103, ib}, {0x000b, gpu}})});
    cases.push_back({"15-k80-haswell-plx-legacy-legend", k80_haswell(0x001d)});
    cases.push_back({"17-hygon-dcu-bcm-switch-rccl", std::move(hygon_dcus(-1).t)});
    cases.push_back({"19-8gpu-pix-phb-sys-no-nvlink", eight_gpus(0x6f00, 0x6f00, std::nullopt)});
    cases.push_back({"21-mi50-epyc-hwloc-xml", mi50_epyc()});
    return cases;
}

}  // namespace rig::test::cases
