// Reading a function's configuration space as sysfs `config` gives it (internal to
// rig_pci): the header, the capability walks, the PCI Express port type and the ACS
// Control register. Layout names: rig/pci/config.hpp.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "rig/pci/config.hpp"
#include "rig/pci/link.hpp"
#include "rig/result.hpp"

namespace rig::pci {

// What rig reads of one function's configuration space.
struct Header {
    std::uint16_t vendor = 0;
    std::uint16_t device = 0;
    std::uint32_t class_code = 0;  // 24 bits
    std::uint8_t layout = 0;       // config::header_type0 or header_type1
    bool multifunction = false;
    std::uint32_t readable = 0;  // bytes the file gave: 64 without CAP_SYS_ADMIN
    // Whether the capability lists could be read (readable >= 256); where not, port_type
    // and acs_control are unknown rather than absent.
    bool capabilities_read = false;
    std::optional<config::PortType> port_type;  // the PCI Express capability's, if it has one
    std::optional<std::uint16_t> acs_control;   // ACS Control, if it has the ACS capability
    // The PCI Express capability's Link Capabilities and Link Status registers, raw
    // (rig/pci/config.hpp), where it has them; link() reads them.
    std::optional<std::uint32_t> link_capabilities;
    std::optional<std::uint16_t> link_status;
    std::optional<std::uint8_t> secondary_bus;  // type 1 only
    std::optional<std::uint8_t> subordinate_bus;

    bool is_bridge() const { return layout == config::header_type1; }
    // Whether its ACS Control sends peer-to-peer requests to the root complex
    // (RR, CR or EC; docs/p2pdma.md §4). false where it has no ACS capability.
    bool redirects() const { return acs_control && (*acs_control & config::acs_redirect) != 0; }
    // The link as the two registers give it (LinkSource::Config), or LinkSource::Unread
    // where the capability was not read or has no link registers. A speed field outside
    // 1..6, or a width of 0, leaves that state nullopt.
    Link link() const;
};

// Parses `bytes`, the first bytes of a configuration space (64, 256 or 4096 of them).
// Follows Linux's bounded walks (drivers/pci/pci.c): a capability list that loops ends
// as if the capability were absent. Error where fewer than 64 bytes are given, or an
// extended capability lies past the bytes given although more than 256 were.
Result<Header> parse_header(std::span<const std::uint8_t> bytes);

}  // namespace rig::pci
