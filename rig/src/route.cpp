// Peer-to-peer routes: Machine::forwards, distance and route. This file is rig's whole
// copy of Linux's p2pdma policy (drivers/pci/p2pdma.c: calc_map_type_and_dist(),
// host_bridge_whitelist(), cpu_supports_p2pdma(); docs/p2pdma.md §1–§3, §6). The
// question: may the client's requests reach a BAR of the provider?
//
// The ways up. Each function climbs pci_upstream_bridge(): to the bridge that owns its
// bus, then that bridge's, up to the last one, which sits on a root bus. A VF climbs from
// its PF's bus (the PF itself is not on its way). A host bridge is never on a way; a
// function's host bridge is the nearest pciDDDD:BB directory above it, so a VMD domain
// (pci10000:e0 nested under 0000:00:0e.0) is a host bridge of its own. Example:
//
//        pci0000:00 (host bridge H)                         pci0000:40 (host bridge K)
//         |                         |                              |
//      00:01.0 root port         00:02.0 root port              40:01.1 root port
//         |                         |                              |
//      01:00.0 switch upstream   03:00.0 F                      41:00.0 G
//         |              |
//      02:08.0        02:10.0    switch downstream ports
//         |              |
//      05:00.0 A      06:00.0 B, 06:00.1 B' (two functions of one device)
//
// Step A (distance). Walk the provider's way; the first node that is also on the
// client's way is the common node; Linux's distance counts the hops to it on both ways.
//   A with A    common A itself, 0 hops        Switch (Bridge where A sits on a root bus)
//   B with B'   common 02:10.0, 2 hops         Switch
//   A with B    common 01:00.0, 4 hops         Switch (+2 per further switch level)
//   a VF with another VF or its PF: common = the PF's upstream bridge, 2 hops: Switch
//   A with F    no common node, same host bridge       Bridge
//   A with G    no common node, two host bridges       System
// Distance never depends on ACS.
//
// Step B (ACS), only where there is a common node. Every node checked: the provider's
// way up to and including the common node, and the client's way below it (A with B:
// 05:00.0, 02:08.0, 01:00.0, 06:00.0, 02:10.0; A with A: A alone). A node whose ACS
// Control has P2P Request Redirect, P2P Completion Redirect or P2P Egress Control set
// (ctrl & 0x2c; PCIe 6.0 §7.7.8.3) sends the requests up to the root complex.
//   no node redirects                      PCI_P2PDMA_MAP_BUS_ADDR: forwards
//   some node redirects                    Step C
//   a node's config gave fewer than 256 bytes (no CAP_SYS_ADMIN: sysfs gives 64), so
//   its ACS Control is unknown             Step C alone decides, as the page says
//
// Step C (the root complex), where there is no common node or Step B sent it here:
//   the boot CPU is AuthenticAMD, family 0x17 or later      THRU_HOST_BRIDGE: forwards
//   (HygonGenuine, Intel, no /proc/cpuinfo: not this rule)
//   else the host-bridge allow-list, on each host bridge's representative: the first
//   device on its root bus (lowest devfn), taken only if it is at 00.0 or is a root port
//   (pci_host_bridge_dev(); port type from the PCI Express capability, or class 0x0604
//   where the capability cannot be read). The first entry matching its vendor and device:
//     one host bridge, representative listed                         THRU_HOST_BRIDGE
//     two host bridges, both listed without REQ_SAME_HOST_BRIDGE     THRU_HOST_BRIDGE
//     two host bridges, either one listed with REQ_SAME_HOST_BRIDGE  NOT_SUPPORTED
//     a representative missing or not listed                         NOT_SUPPORTED
//
// A function that cannot be read (not a bus address, no function of the machine, a file
// on its way unreadable or malformed, every function of a transport without sysfs files)
// is unread: forwards is false and distance nullopt. Machine caches nothing: ACS Control
// changes at run time (setpci, pci=config_acs), and each of its answers reads the files
// anew. Routes (routes.hpp) reads every way once and answers every pair from the ways
// as they were then, by this same rule (route_rule.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <stdexcept>
#include <unordered_map>
#include <string>

#include "machine_state.hpp"
#include "rig/text.hpp"
#include "route_links.hpp"
#include "route_rule.hpp"
#include "sysfs.hpp"

namespace rig::pci {
namespace {

using sysfs::Node;
using sysfs::Way;

// docs/p2pdma.md §3: pci_p2pdma_whitelist[], in the kernel's order (the first match
// decides). device nullopt: PCI_ANY_ID.
struct Allowed {
    std::uint16_t vendor;
    std::optional<std::uint16_t> device;
    bool same_host_bridge_only;  // REQ_SAME_HOST_BRIDGE
    const char* what;
};
constexpr std::array<Allowed, 30> allow_list{{
    {0x8086, 0x3c00, true, "Intel Sandy Bridge-EP"},
    {0x8086, 0x3c01, true, "Intel Sandy Bridge-EP"},
    {0x8086, 0x2f00, true, "Intel Haswell-EP"},
    {0x8086, 0x2f01, true, "Intel Haswell-EP"},
    {0x8086, 0x2030, false, "Intel Skylake-SP root port"},
    {0x8086, 0x2031, false, "Intel Skylake-SP root port"},
    {0x8086, 0x2032, false, "Intel Skylake-SP root port"},
    {0x8086, 0x2033, false, "Intel Skylake-SP root port"},
    {0x8086, 0x2020, false, "Intel Skylake-SP"},
    {0x8086, 0x09a2, false, "Intel Ice Lake-SP and later Xeon"},
    {0x8086, 0x0b25, false, "Intel DSA (Sapphire Rapids)"},
    {0x8086, 0x0cfe, false, "Intel IAA (Sapphire Rapids)"},
    {0x8086, 0x11fb, false, "Intel DSA (Granite Rapids-D)"},
    {0x8086, 0x1212, false, "Intel DSA (Diamond Rapids)"},
    {0x8086, 0x1216, false, "Intel IAA (Diamond Rapids)"},
    {0x8086, 0x4940, false, "Intel QAT 4xxx"},
    {0x8086, 0x4942, false, "Intel QAT 401xx"},
    {0x8086, 0x4944, false, "Intel QAT 402xx"},
    {0x8086, 0x4946, false, "Intel QAT 420xx"},
    {0x8086, 0x4948, false, "Intel QAT 6xxx"},
    {0x1ae0, std::nullopt, false, "Google SoC"},
    {0x10de, 0x2f95, false, "NVIDIA CPU"},
    {0x10de, 0x2f96, false, "NVIDIA CPU"},
    {0x10de, 0x2f97, false, "NVIDIA CPU"},
    {0x10de, 0x2f98, false, "NVIDIA CPU"},
    {0x1d17, 0x1003, true, "Zhaoxin"},
    {0x1d17, 0x1005, true, "Zhaoxin"},
    {0x1d17, 0x1006, true, "Zhaoxin"},
    {0x1d17, 0x1007, true, "Zhaoxin"},
    {0x1d17, 0x1008, false, "Zhaoxin"},
}};

// x86 family of AMD's Zen (docs/p2pdma.md §2 step 8).
constexpr unsigned amd_zen_family = 0x17;

std::string ids(const Node& node) { return fmt::format("{:04x}:{:04x}", node.header.vendor, node.header.device); }

// __host_bridge_whitelist(): whether the host bridge above `way` is listed, given
// whether both functions share it.
HostBridgeAnswer host_bridge_allowed(const Way& way, bool same_host_bridge) {
    const std::string& name = way.host_bridge;
    auto first = sysfs::first_device(way.host_bridge_dir);
    if (!first) return {false, name + ": its first device cannot be read: " + first.error()};
    if (!*first) return {false, name + " has no device on its root bus"};
    const Node& device = **first;
    const auto address = BusAddress::parse(device.bus);
    const bool at_zero = address && address->device == 0 && address->function == 0;
    const bool root_port = device.header.capabilities_read ? device.header.port_type == config::PortType::RootPort
                                                           : (device.header.class_code >> 8) == 0x0604;
    if (!at_zero && !root_port)
        return {false,
                fmt::format("{} has no representative: its first device {} ({}) is neither at 00.0 nor a root port",
                            name, device.bus, ids(device))};
    for (const Allowed& entry : allow_list) {
        if (entry.vendor != device.header.vendor || (entry.device && *entry.device != device.header.device)) continue;
        if (entry.same_host_bridge_only && !same_host_bridge)
            return {false, fmt::format("{}'s first device {} ({}, {}) is allowed only within its own host bridge", name,
                                       device.bus, ids(device), entry.what)};
        return {true, fmt::format("{}'s first device {} ({}, {}) is in the allow-list", name, device.bus, ids(device),
                                  entry.what)};
    }
    return {false, fmt::format("{}'s first device {} ({}) is not in the allow-list", name, device.bus, ids(device))};
}

bool cpu_rule_applies(const sysfs::Cpu& cpu) {
    return cpu.vendor == "AuthenticAMD" && cpu.family && *cpu.family >= amd_zen_family;
}

const RuleInputs::HostBridge& facts_of(const RuleInputs& in, std::uint32_t host_bridge) {
    if (host_bridge >= in.host_bridges.size())
        throw std::logic_error("rig: no facts for host bridge " + std::to_string(host_bridge));  // rule_inputs' bug
    return in.host_bridges[host_bridge];
}

// Step C's verdict alone.
bool root_complex_allows(std::uint32_t provider, std::uint32_t client, const RuleInputs& in) {
    if (in.cpu_rule) return true;
    if (provider == client) return facts_of(in, provider).same.allowed;
    return facts_of(in, provider).cross.allowed && facts_of(in, client).cross.allowed;
}

// Step C: the root complex's rule, explained.
void root_complex_rule(Route& r, const Way& provider, const Way& client, const RuleInputs& in) {
    const sysfs::Cpu& cpu = in.cpu;
    if (!cpu.error.empty()) r.cpu = "unknown (" + cpu.error + ")";
    else
        r.cpu = (cpu.vendor.empty() ? std::string("no vendor_id") : cpu.vendor) +
                (cpu.family ? fmt::format(" family {:#x}", *cpu.family) : std::string(" without a cpu family"));
    if (in.cpu_rule) {
        r.cpu_rule = true;
        r.verdict = Verdict::ThroughHostBridge;
        return;
    }
    const std::uint32_t p = provider.host_bridge_id, c = client.host_bridge_id;
    if (p == c) r.host_bridge_rule = facts_of(in, p).same.why;
    else r.host_bridge_rule = facts_of(in, p).cross.why + "; " + facts_of(in, c).cross.why;
    r.verdict = root_complex_allows(p, c, in) ? Verdict::ThroughHostBridge : Verdict::NotSupported;
}

// Step A: where the nearest node on both ways lies on each (the number of hops to it), or
// nullopt. Both ways below one host bridge are paths of one tree from its root bus, so
// nodes at one depth (hops from the root bus) are the same node or not, compared as whole
// nodes by number: the deepest depth at which they are the same is the common node.
struct Common {
    std::size_t provider = 0, client = 0;
};
std::optional<Common> common_node(const Leg& provider, const Leg& client) {
    if (provider.host_bridge != client.host_bridge) return std::nullopt;
    const std::size_t np = provider.steps.size(), nc = client.steps.size();
    for (std::size_t depth = std::min(np, nc); depth-- > 0;) {
        const std::size_t i = np - 1 - depth, j = nc - 1 - depth;
        if (provider.steps[i].id == client.steps[j].id) return Common{i, j};
    }
    return std::nullopt;
}

Distance distance_of(const Leg& provider, const Leg& client, const std::optional<Common>& common) {
    if (!common) return provider.host_bridge == client.host_bridge ? Distance::Bridge : Distance::System;
    // A function with itself: Switch where it has an upstream bridge, Bridge on a root bus.
    const bool same_function = common->provider == 0 && common->client == 0;
    return same_function && provider.steps.size() == 1 ? Distance::Bridge : Distance::Switch;
}

// The legs of two ways, with the steps they are made of.
struct Legs {
    std::vector<Step> provider_steps, client_steps;
    Leg provider, client;
    Legs(const Way& p, const Way& c)
        : provider_steps(steps_of(p)),
          client_steps(steps_of(c)),
          provider{provider_steps, p.host_bridge_id},
          client{client_steps, c.host_bridge_id} {}
};

}  // namespace

std::uint32_t number(std::span<Way* const> ways) {
    std::unordered_map<std::string, std::uint32_t> nodes, host_bridges;
    for (Way* way : ways) {
        if (!way) continue;
        way->host_bridge_id =
            host_bridges.emplace(way->host_bridge_dir.native(), static_cast<std::uint32_t>(host_bridges.size()))
                .first->second;
        for (Node& node : way->nodes)
            node.id = nodes.emplace(node.dir.native(), static_cast<std::uint32_t>(nodes.size())).first->second;
    }
    return static_cast<std::uint32_t>(host_bridges.size());
}

std::vector<Step> steps_of(const Way& way) {
    std::vector<Step> steps;
    steps.reserve(way.nodes.size());
    for (const Node& node : way.nodes)
        steps.push_back({node.id, node.header.capabilities_read, node.header.redirects()});
    return steps;
}

RuleInputs rule_inputs(const std::filesystem::path& root, std::span<const Way* const> ways,
                       std::uint32_t host_bridges) {
    RuleInputs in;
    in.cpu = sysfs::read_cpu(root);
    in.cpu_rule = cpu_rule_applies(in.cpu);
    in.host_bridges.resize(host_bridges);
    std::vector<bool> done(host_bridges, false);
    for (const Way* way : ways) {
        if (!way || way->host_bridge_id >= host_bridges || done[way->host_bridge_id]) continue;
        done[way->host_bridge_id] = true;
        in.host_bridges[way->host_bridge_id] = {host_bridge_allowed(*way, true), host_bridge_allowed(*way, false)};
    }
    return in;
}

Answer answer(const Leg& provider, const Leg& client, const RuleInputs& in) {
    const auto common = common_node(provider, client);
    const Distance distance = distance_of(provider, client, common);
    if (common) {
        bool clear = true;
        for (std::size_t i = 0; i <= common->provider; ++i)
            clear = clear && provider.steps[i].read && !provider.steps[i].redirects;
        for (std::size_t j = 0; j < common->client; ++j)
            clear = clear && client.steps[j].read && !client.steps[j].redirects;
        if (clear) return {Verdict::Direct, distance};
    }
    const bool allowed = root_complex_allows(provider.host_bridge, client.host_bridge, in);
    return {allowed ? Verdict::ThroughHostBridge : Verdict::NotSupported, distance};
}

namespace {

// A route of nothing decided yet: its two functions and their host bridges.
Route named(std::string_view provider_bus, std::string_view client_bus, const Way& provider, const Way& client) {
    Route r;
    r.provider = std::string(provider_bus);
    r.client = std::string(client_bus);
    r.provider_host_bridge = provider.host_bridge;
    r.client_host_bridge = client.host_bridge;
    return r;
}

}  // namespace

Route decide(std::string_view provider_bus, std::string_view client_bus, const Way& provider, const Way& client,
             const RuleInputs& in) {
    Route r = named(provider_bus, client_bus, provider, client);
    const Legs legs(provider, client);
    const auto common = common_node(legs.provider, legs.client);
    r.distance = distance_of(legs.provider, legs.client, common);
    if (!common) {
        add_links(r, provider, std::nullopt, client, std::nullopt);
        root_complex_rule(r, provider, client, in);
        return r;
    }
    r.common = provider.nodes[common->provider].bus;
    add_links(r, provider, common->provider, client, common->client);

    // Step B: the provider's way up to and including the common node, the client's below it.
    auto check = [&r](const Node& node) {
        if (!node.header.capabilities_read) r.acs_read = false;
        else if (node.header.redirects()) r.redirects.push_back({node.bus, *node.header.acs_control});
    };
    for (std::size_t i = 0; i <= common->provider; ++i) check(provider.nodes[i]);
    for (std::size_t j = 0; j < common->client; ++j) check(client.nodes[j]);
    if (r.acs_read && r.redirects.empty()) {
        r.verdict = Verdict::Direct;
        return r;
    }
    root_complex_rule(r, provider, client, in);
    return r;
}

Route host_bridge_decide(std::string_view provider_bus, std::string_view client_bus, const Way& provider,
                         const Way& client, const RuleInputs& in) {
    Route r = named(provider_bus, client_bus, provider, client);
    const Legs legs(provider, client);
    r.distance = distance_of(legs.provider, legs.client, common_node(legs.provider, legs.client));
    add_links(r, provider, std::nullopt, client, std::nullopt);  // up to the root complex and down
    root_complex_rule(r, provider, client, in);
    return r;
}

namespace {

// "ReqRedir CmpltRedir" for the bits of `control` that redirect (lspci's names).
std::string redirect_bits(std::uint16_t control) {
    std::string out;
    auto add = [&](std::uint16_t bit, const char* name) {
        if ((control & bit) == 0) return;
        if (!out.empty()) out += ' ';
        out += name;
    };
    add(config::acs_request_redirect, "ReqRedir");
    add(config::acs_completion_redirect, "CmpltRedir");
    add(config::acs_egress_control, "EgressCtrl");
    return out;
}

// The links, one a line, then the bottleneck and each downtrained link.
std::string explain_links(const Route& r) {
    if (r.links.empty()) return "  links: none (the same function, or functions on a root bus)\n";
    const auto state = [](const std::optional<LinkState>& s) { return s ? to_string(*s) : std::string("unknown"); };
    std::string out = "  links:\n";
    for (const RouteLink& l : r.links) {
        out += fmt::format("    {} - {}: {}", l.function, l.port, state(l.status));
        if (const auto can = l.capable(); can && *can != l.status)
            out += fmt::format(" (both ends can {})", to_string(*can));
        out += "\n";
    }
    if (r.bottleneck)
        out += fmt::format("  bottleneck: {}, {} bytes/s each way\n", to_string(*r.bottleneck),
                           bytes_per_second(*r.bottleneck));
    else out += "  bottleneck: unknown (a link's status is unread)\n";
    for (const RouteLink& l : r.downtrained())
        out += fmt::format(
            "  warning: {} is downtrained: LnkSta {}, LnkCap {}{}\n", l.function, state(l.status), state(l.capability),
            l.port_capability ? fmt::format(" (port {} LnkCap {})", l.port, to_string(*l.port_capability))
                              : std::string());
    return out;
}

}  // namespace

namespace {

// The two ways, or the route that says which is unread.
struct Two {
    std::optional<Way> provider, client;
    Route unread;
};
Two read_two(const Machine::State& state, std::string_view provider, std::string_view client) {
    Two t;
    t.unread.provider = std::string(provider);
    t.unread.client = std::string(client);
    if (!state.root) {
        t.unread.unread = *state.name + ": the transport sent no sysfs files, so every function is unread";
        return t;
    }
    auto p = sysfs::read_way(*state.root, provider);
    if (!p) {
        t.unread.unread = p.error();
        return t;
    }
    auto c = sysfs::read_way(*state.root, client);
    if (!c) {
        t.unread.unread = c.error();
        return t;
    }
    t.provider = std::move(*p);
    t.client = std::move(*c);
    return t;
}

}  // namespace

namespace {

// The two ways read and numbered, answered by `rule` (decide or host_bridge_decide).
template <class Rule>
Route read_and_decide(const Machine::State& state, std::string_view provider, std::string_view client, Rule rule) {
    Two t = read_two(state, provider, client);
    if (!t.provider) return t.unread;
    Way* ways[] = {&*t.provider, &*t.client};
    const std::uint32_t host_bridges = number(ways);
    const Way* read[] = {&*t.provider, &*t.client};
    return rule(provider, client, *t.provider, *t.client, rule_inputs(*state.root, read, host_bridges));
}

}  // namespace

Route Machine::route(std::string_view provider, std::string_view client) const {
    return read_and_decide(*state_, provider, client, decide);
}

Route Machine::host_bridge_route(std::string_view provider, std::string_view client) const {
    return read_and_decide(*state_, provider, client, host_bridge_decide);
}

bool Machine::forwards(std::string_view provider, std::string_view client) const {
    return route(provider, client).forwards();
}

std::optional<Distance> Machine::distance(std::string_view a, std::string_view b) const {
    if (!state_->root) return std::nullopt;
    auto p = sysfs::read_way(*state_->root, a);
    auto c = p ? sysfs::read_way(*state_->root, b) : p;
    if (!p || !c) return std::nullopt;
    Way* ways[] = {&*p, &*c};
    number(ways);
    const Legs legs(*p, *c);
    return distance_of(legs.provider, legs.client, common_node(legs.provider, legs.client));
}

std::string Route::explain() const {
    std::string out = fmt::format("{} -> BAR of {}: {}", client, provider, to_string(verdict));
    switch (verdict) {
    case Verdict::Unread: return out + "\n  " + unread + "\n";
    case Verdict::Direct: out += " (PCI_P2PDMA_MAP_BUS_ADDR)\n"; break;
    case Verdict::ThroughHostBridge: out += " (PCI_P2PDMA_MAP_THRU_HOST_BRIDGE)\n"; break;
    case Verdict::NotSupported: out += " (PCI_P2PDMA_MAP_NOT_SUPPORTED)\n"; break;
    }
    out += fmt::format("  host bridges: provider {}, client {}\n", provider_host_bridge, client_host_bridge);
    out += fmt::format("  distance: {}", distance ? to_string(*distance) : "unknown");
    if (common) out += fmt::format(", common upstream node {}\n", *common);
    else out += ", no common upstream bridge: the requests cross the root complex\n";
    if (common) {
        if (!acs_read)
            out +=
                "  ACS: configuration space past 64 bytes is unreadable (no CAP_SYS_ADMIN), so the root complex's "
                "rule alone decides\n";
        if (!redirects.empty()) {
            std::string list, names;
            for (const Redirect& r : redirects) {
                list +=
                    fmt::format("\n    {} ACSCtl {} ({})", r.bus, text::hex(r.control, 4), redirect_bits(r.control));
                names += (names.empty() ? "" : ";") + r.bus;
            }
            out += "  ACS redirects the requests to the root complex at:" + list +
                   "\n    (Linux lifts this with pci=disable_acs_redir=" + names + ")\n";
        } else if (acs_read) {
            out += "  ACS: no node on either way redirects peer-to-peer requests\n";
        }
    }
    if (!cpu.empty())
        out += fmt::format("  CPU: {}{}\n", cpu,
                           cpu_rule ? ": AMD family 0x17 or later forwards every pair"
                                    : ": not AMD family 0x17 or later, so the host-bridge allow-list decides");
    if (!host_bridge_rule.empty()) out += "  allow-list: " + host_bridge_rule + "\n";
    out += explain_links(*this);
    return out;
}

std::string_view to_string(Distance d) {
    switch (d) {
    case Distance::Switch: return "switch";
    case Distance::Bridge: return "bridge";
    case Distance::System: return "system";
    }
    return "unknown";
}

std::string_view to_string(Verdict v) {
    switch (v) {
    case Verdict::Unread: return "unread";
    case Verdict::Direct: return "direct";
    case Verdict::ThroughHostBridge: return "through host bridge";
    case Verdict::NotSupported: return "not supported";
    }
    return "unknown";
}

}  // namespace rig::pci
