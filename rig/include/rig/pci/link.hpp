// rig/pci/link.hpp: PCI Express links, their speeds and widths, and what they carry.
//
// A link joins a function below (an endpoint, a switch's upstream port) to a port above
// (a root port, a switch's downstream port). Each end reports it in its PCI Express
// capability (PCIe Base 6.0 §7.5.3): Link Capabilities (§7.5.3.6, lspci's LnkCap) gives
// the fastest speed and widest width the end can do, Link Status (§7.5.3.8, LnkSta) what
// the link trained at. Linux shows the same two in sysfs as max_link_speed,
// max_link_width, current_link_speed and current_link_width
// (Documentation/ABI/testing/sysfs-bus-pci), readable where configuration space past its
// first 64 bytes is not (no CAP_SYS_ADMIN).
//
// Speeds are generations; the bandwidth a lane carries each way is its rate after the line
// encoding (PCIe Base 6.0 §4.2): 8b/10b for 2.5 and 5 GT/s, 128b/130b for 8, 16 and
// 32 GT/s, and for 64 GT/s Flit Mode's 256-byte flits of which 236 bytes carry TLPs
// (§4.2.3). Packet headers and flow control take more; these are the links' ceilings.
//
// Plain values: every function here is pure and safe from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace rig::pci {

// A link speed as its generation; the value is the speed fields' encoding (1..6).
enum class Generation : std::uint8_t { Gen1 = 1, Gen2, Gen3, Gen4, Gen5, Gen6 };

// A speed and a width: what a link runs at, or what an end can do.
struct LinkState {
    Generation speed = Generation::Gen4;
    unsigned width = 16;  // lanes: 1, 2, 4, 8, 12, 16 or 32
    friend bool operator==(const LinkState&, const LinkState&) = default;
};

// Where a function's link numbers were read.
enum class LinkSource {
    Unread,  // neither its configuration space nor sysfs gave them
    Config,  // the PCI Express capability's Link Capabilities and Link Status
    Sysfs,   // max_link_speed/width and current_link_speed/width
};

// What one function reports of the link above it (an endpoint's, an upstream port's) or
// below it (a root port's, a downstream port's).
struct Link {
    std::optional<LinkState> status;      // LnkSta; nullopt: unknown or down (width 0)
    std::optional<LinkState> capability;  // LnkCap; nullopt: unknown
    LinkSource source = LinkSource::Unread;
    friend bool operator==(const Link&, const Link&) = default;
};

// One link on a route: the function below it and the port above it, as both report it.
struct RouteLink {
    std::string function;                      // the endpoint or upstream port below (for an SR-IOV VF: its PF)
    std::string port;                          // the root port or downstream port above
    std::optional<LinkState> status;           // LnkSta: the function's, else the port's
    std::optional<LinkState> capability;       // the function's LnkCap
    std::optional<LinkState> port_capability;  // the port's LnkCap
    // The fastest speed and widest width both ends can do (each the lower of the two);
    // one end's where only one is known; nullopt where neither is.
    std::optional<LinkState> capable() const;
    // Whether the link trained below what both its ends can do, in speed or in width
    // (a bad riser, a BIOS setting, a slot wired for fewer lanes than the card has). false
    // where the status or both capabilities are unknown.
    bool downtrained() const;
};

// 2.5, 5, 8, 16, 32 or 64: gigatransfers per second per lane.
double gigatransfers(Generation g);
// The bytes per second one lane carries each way after encoding (see above):
// 250'000'000 for Gen1, 500'000'000 Gen2, 984'615'384 Gen3, 1'969'230'769 Gen4,
// 3'938'461'538 Gen5, 7'375'000'000 Gen6.
std::uint64_t lane_bytes_per_second(Generation g);
// The link's bytes per second each way: its lanes times one lane's.
std::uint64_t bytes_per_second(const LinkState& s);

// The generation of a speed field's value (1..6), or nullopt for any other.
std::optional<Generation> generation_of(std::uint64_t speed_field);
// The generation a sysfs speed names: "16.0 GT/s PCIe", "8 GT/s", "2.5 GT/s PCIe\n";
// nullopt for "Unknown", "Unknown speed" or anything else.
std::optional<Generation> parse_sysfs_speed(std::string_view text);

// "Gen4", "Gen3 x8" style spellings: "Gen4 x16".
std::string to_string(Generation g);
std::string to_string(const LinkState& s);
// A function's link for people: "Gen4 x16"; "Gen3 x8 (can Gen4 x16)" where it runs below
// its own capability; "unknown" where its status is unread or the link is down.
std::string describe(const Link& link);
// "config", "sysfs", "unread".
std::string_view to_string(LinkSource s);

}  // namespace rig::pci
