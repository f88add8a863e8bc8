// The built-in machines of p2p_copy and rig.sim (rig/sim/layouts.hpp), each drawn below.
// The vendor and device IDs are those of the parts named, so the route explanations read
// as they would on such a machine; the allow-list facts are docs/p2pdma.md §3's.
#include "rig/sim/layouts.hpp"

#include "rig/sim/system.hpp"

namespace rig::sim {
namespace {

using rig::sim::Cpu;
using rig::sim::FunctionRef;
using rig::sim::Identity;
using rig::sim::Spec;
using rig::sim::Topology;

Layout place(std::string name, Topology t, FunctionRef gpu, FunctionRef nic) {
    std::string gpu_bus = t.bus(gpu), nic_bus = t.bus(nic);
    return {std::move(name), std::move(t), std::move(gpu_bus), std::move(nic_bus)};
}

// pci0000:00 ── 00:00.0 root complex
//            └─ 00:01.0 root port ── 01:00.0 switch upstream port
//                                     ├─ 02:00.0 downstream port ── 03:00.0 GPU
//                                     └─ 02:01.0 downstream port ── 04:00.0 NIC
struct SwitchParts {
    Cpu cpu;
    Spec root_complex, root_port, upstream;
    std::uint16_t switch_vendor, switch_device;
    std::uint16_t acs_control;  // of both downstream ports
};

Layout below_switch(std::string name, const SwitchParts& parts, const Identity& gpu, const Identity& nic,
                    std::optional<unsigned> nic_iommu_group = std::nullopt) {
    Topology t(parts.cpu);
    const auto host = t.host_bridge(0, 0);
    t.add(host, parts.root_complex);
    const auto upstream = t.add(t.add(host, parts.root_port), parts.upstream);
    const auto gpu_port =
        t.add(upstream, Spec::downstream_port(0, parts.switch_vendor, parts.switch_device, parts.acs_control));
    const auto gpu_at = t.add(gpu_port, rig::sim::endpoint_spec(0, 0, gpu));
    const auto nic_port =
        t.add(upstream, Spec::downstream_port(1, parts.switch_vendor, parts.switch_device, parts.acs_control));
    auto nic_spec = rig::sim::endpoint_spec(0, 0, nic);
    nic_spec.iommu_group = nic_iommu_group;
    const auto nic_at = t.add(nic_port, nic_spec);
    return place(std::move(name), std::move(t), gpu_at, nic_at);
}

// A Sapphire Rapids host bridge (8086:09a2 at 00.0 is on the allow-list) and a Broadcom
// PEX89000 switch (1000:c030) whose downstream ports implement ACS with nothing enabled,
// as firmware leaves them with the IOMMU off or pci=disable_acs_redir.
SwitchParts allowed_switch() {
    return {Cpu::intel(0x8f),
            Spec::root_complex(0x8086, 0x09a2),
            Spec::root_port(1, 0, 0x8086, 0x352a),
            Spec::upstream_port(0x1000, 0xc030),
            0x1000,
            0xc030,
            0x0000};
}

// A Broadwell-EP host bridge (8086:6f00, not on the allow-list) and a PLX PEX 8747 switch
// whose downstream ports redirect: ACSCtl 0x001d = SrcValid ReqRedir CmpltRedir
// UpstreamFwd, as Linux sets it with the IOMMU on and the lspci of docs/bugs.md B11 shows.
SwitchParts redirecting_switch() {
    return {Cpu::intel(0x4f),
            Spec::root_complex(0x8086, 0x6f00),
            Spec::root_port(1, 0, 0x8086, 0x6f08),
            Spec::upstream_port(0x10b5, 0x8747),
            0x10b5,
            0x8747,
            0x001d};
}

// pci0000:00 ── 00:00.0 root complex        pci0000:40 ── 40:00.0 root complex
//            └─ 00:01.1 root port ── 01:00.0 GPU       └─ 40:01.1 root port ── 41:00.0 NIC
// AMD EPYC (Zen 3, family 0x19; root complex 1022:1480, GPP bridge 1022:1483).
Layout two_host_bridges(const Identity& gpu, const Identity& nic) {
    Topology t(Cpu::amd(0x19));
    FunctionRef at[2];
    const Identity* identities[2] = {&gpu, &nic};
    for (int i = 0; i < 2; ++i) {
        const auto host = t.host_bridge(0, static_cast<std::uint8_t>(0x40 * i));
        t.add(host, Spec::root_complex(0x1022, 0x1480));
        at[i] =
            t.add(t.add(host, Spec::root_port(1, 1, 0x1022, 0x1483)), rig::sim::endpoint_spec(0, 0, *identities[i]));
    }
    return place("two-host-bridges", std::move(t), at[0], at[1]);
}

}  // namespace

rig::Result<Layout> builtin(std::string_view name, const Identity& gpu, const Identity& nic) {
    if (name == "switch") return below_switch("switch", allowed_switch(), gpu, nic);
    if (name == "acs") return below_switch("acs", redirecting_switch(), gpu, nic);
    if (name == "two-host-bridges") return two_host_bridges(gpu, nic);
    // The NIC in IOMMU group 1, as VFIO with the IOMMU on takes it. With it Linux turns
    // ACS redirect on at the switch's downstream ports, so the requests go up to the
    // allow-listed root complex, where the NIC's IOMMU domain maps the GPU's BAR.
    if (name == "iommu") {
        SwitchParts parts = allowed_switch();
        parts.acs_control = 0x001d;
        return below_switch("iommu", parts, gpu, nic, 1u);
    }
    // Behind an IOMMU with ACS left off (pci=disable_acs_redir, or firmware that has
    // none): the switch carries the NIC's requests to the BAR before the IOMMU sees them.
    if (name == "iommu-direct") return below_switch("iommu-direct", allowed_switch(), gpu, nic, 1u);
    // Behind an IOMMU with ACS redirect, to a root complex not on the allow-list.
    if (name == "iommu-blocked") return below_switch("iommu-blocked", redirecting_switch(), gpu, nic, 1u);
    // The switch machine; the GPU's BAR smaller than its memory (open_pair's ModelConfig).
    if (name == "small-bar") return below_switch("small-bar", allowed_switch(), gpu, nic);
    std::string names;
    for (std::string_view n : builtin_names) names += (names.empty() ? "" : ", ") + std::string(n);
    return rig::fail("no built-in topology \"", std::string(name), "\" (", names,
                     "; or a directory `rig snapshot` wrote, with --gpu and --nic)");
}

}  // namespace rig::sim
