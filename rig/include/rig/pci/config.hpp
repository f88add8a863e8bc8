// rig/pci/config.hpp: the layout of PCI configuration space that rig reads and writes:
// offsets, capability IDs and bits, each named once, no logic (docs/design.md, "wire
// apart from logic"). The route reader (rig::pci), the fixture writer and device models
// (rig::sim) and Function's accessors all use these names.
//
// Sources: PCI Local Bus 3.0 §6.1 (header), §6.7 (capability list); PCI Express Base 6.0
// §7.5.1 (type 0/1 headers), §7.5.3 (PCI Express capability), §7.6 (extended
// capabilities), §7.7.8 (ACS); Linux include/uapi/linux/pci_regs.h uses the same numbers.
#pragma once

#include <cstdint>

#include "rig/little_endian.hpp"

namespace rig::pci::config {

// What sysfs `config` gives: 64 bytes to a process without CAP_SYS_ADMIN
// (drivers/pci/pci-sysfs.c), 256 for conventional PCI, 4096 for PCI Express.
inline constexpr std::uint32_t unprivileged_bytes = 64;
inline constexpr std::uint32_t legacy_bytes = 256;
inline constexpr std::uint32_t express_bytes = 4096;

// §6.1 / §7.5.1: the header common to type 0 (endpoint) and type 1 (bridge).
inline constexpr std::uint32_t vendor_id = 0x00;             // 16 bits
inline constexpr std::uint32_t device_id = 0x02;             // 16 bits
inline constexpr std::uint32_t command = 0x04;               // 16 bits
inline constexpr std::uint32_t status = 0x06;                // 16 bits
inline constexpr std::uint32_t revision_id = 0x08;           // 8 bits; class code in the 3 bytes above
inline constexpr std::uint32_t class_code = 0x09;            // 24 bits: programming interface, subclass, base class
inline constexpr std::uint32_t header_type = 0x0e;           // 8 bits
inline constexpr std::uint32_t bar0 = 0x10;                  // BARs: 6 (type 0) or 2 (type 1) dwords
inline constexpr std::uint32_t subsystem_vendor_id = 0x2c;   // type 0 only
inline constexpr std::uint32_t subsystem_id = 0x2e;          // type 0 only
inline constexpr std::uint32_t capabilities_pointer = 0x34;  // 8 bits, low 2 bits reserved

inline constexpr std::uint16_t command_memory_space = 0x0002;
inline constexpr std::uint16_t command_bus_master = 0x0004;
inline constexpr std::uint16_t status_capabilities_list = 0x0010;

inline constexpr little_endian::Field<0, 7> header_layout;  // 0: type 0, 1: type 1 (PCI-to-PCI bridge)
inline constexpr little_endian::Field<7, 1> header_multifunction;
inline constexpr std::uint8_t header_type0 = 0;
inline constexpr std::uint8_t header_type1 = 1;

// §7.5.1.3: the type 1 header's bus numbers (8 bits each).
inline constexpr std::uint32_t primary_bus = 0x18;
inline constexpr std::uint32_t secondary_bus = 0x19;
inline constexpr std::uint32_t subordinate_bus = 0x1a;

// §7.5.1.2.1 BAR bits.
inline constexpr std::uint32_t bar_io = 0x1;
inline constexpr std::uint32_t bar_memory_64 = 0x4;  // type field 10b
inline constexpr std::uint32_t bar_prefetchable = 0x8;

// §6.7: each capability is (ID: 8 bits, next pointer: 8 bits, ...).
inline constexpr std::uint32_t capability_id = 0x0;
inline constexpr std::uint32_t capability_next = 0x1;
inline constexpr std::uint8_t capability_pci_express = 0x10;
inline constexpr std::uint8_t capability_msix = 0x11;
// The list lies in bytes 0x40..0xff; a list longer than (256 - 64) / 4 entries loops.
inline constexpr std::uint32_t capability_first = 0x40;
inline constexpr unsigned capability_limit = 48;

// §7.5.3.2: PCI Express Capabilities register at capability + 2.
inline constexpr std::uint32_t express_flags = 0x2;  // 16 bits
inline constexpr little_endian::Field<0, 4> express_version;
inline constexpr little_endian::Field<4, 4> express_port_type;
// §7.5.3.2 Device/Port Type values.
enum class PortType : std::uint8_t {
    Endpoint = 0x0,
    LegacyEndpoint = 0x1,
    RootPort = 0x4,
    UpstreamPort = 0x5,    // of a switch
    DownstreamPort = 0x6,  // of a switch
    PcieToPciBridge = 0x7,
    PciToPcieBridge = 0x8,
    RootComplexEndpoint = 0x9,  // RCiEP
    RootComplexEventCollector = 0xa,
};

// §7.6.3: extended capabilities start at 0x100; each header is one dword.
inline constexpr std::uint32_t extended_first = 0x100;
inline constexpr little_endian::Field<0, 16> extended_id;
inline constexpr little_endian::Field<16, 4> extended_version;
inline constexpr little_endian::Field<20, 12> extended_next;
// Linux stops after (4096 - 256) / 8 headers (drivers/pci/pci.c, pci_find_next_ext_capability).
inline constexpr unsigned extended_limit = (express_bytes - legacy_bytes) / 8;

// §7.7.8: Access Control Services, extended capability 0x000d.
inline constexpr std::uint16_t extended_acs = 0x000d;
inline constexpr std::uint32_t acs_capability = 0x4;  // 16 bits: what the port implements
inline constexpr std::uint32_t acs_control = 0x6;     // 16 bits: what is enabled
// Bits of both registers.
inline constexpr std::uint16_t acs_source_validation = 0x0001;     // SrcValid
inline constexpr std::uint16_t acs_translation_blocking = 0x0002;  // TransBlk
inline constexpr std::uint16_t acs_request_redirect = 0x0004;      // ReqRedir
inline constexpr std::uint16_t acs_completion_redirect = 0x0008;   // CmpltRedir
inline constexpr std::uint16_t acs_upstream_forwarding = 0x0010;   // UpstreamFwd
inline constexpr std::uint16_t acs_egress_control = 0x0020;        // EgressCtrl
inline constexpr std::uint16_t acs_direct_translated = 0x0040;     // DirectTrans
// The bits that send peer-to-peer requests up to the root complex, as p2pdma tests them
// (drivers/pci/p2pdma.c; docs/p2pdma.md §4).
inline constexpr std::uint16_t acs_redirect = acs_request_redirect | acs_completion_redirect | acs_egress_control;
static_assert(acs_redirect == 0x002c);

// §7.5.3.3–7.5.3.4: Device Capabilities and Device Control of the PCI Express capability.
inline constexpr std::uint32_t express_device_capabilities = 0x4;         // 32 bits
inline constexpr std::uint32_t express_device_control = 0x8;              // 16 bits
inline constexpr std::uint32_t device_capabilities_flr = 0x1000'0000;     // Function Level Reset Capability
inline constexpr std::uint16_t device_control_relaxed_ordering = 0x0010;  // Enable Relaxed Ordering
inline constexpr std::uint16_t device_control_no_snoop = 0x0800;          // Enable No Snoop
inline constexpr std::uint16_t device_control_flr = 0x8000;               // Initiate FLR; reads 0

// §7.5.3.6 Link Capabilities (32 bits) and §7.5.3.8 Link Status (16 bits) of the PCI
// Express capability, what lspci -vv prints as LnkCap and LnkSta. A speed field holds
// 1..6 for 2.5, 5, 8, 16, 32 and 64 GT/s (Max Link Speed indexes the Supported Link Speeds
// Vector of Link Capabilities 2, §7.5.3.18, whose bit n-1 is that generation); a width
// field holds the lanes, x1..x32; a Negotiated Link Width of 0 is a link that is down.
// An SR-IOV VF's link registers are reserved (SR-IOV 1.1 §3.5): its link is its PF's.
inline constexpr std::uint32_t express_link_capabilities = 0x0c;                        // 32 bits
inline constexpr std::uint32_t express_link_control = 0x10;                             // 16 bits
inline constexpr std::uint32_t express_link_status = 0x12;                              // 16 bits
inline constexpr little_endian::Field<0, 4> link_capabilities_speed;                    // Max Link Speed
inline constexpr little_endian::Field<4, 6> link_capabilities_width;                    // Maximum Link Width
inline constexpr little_endian::Field<0, 4> link_status_speed;                          // Current Link Speed
inline constexpr little_endian::Field<4, 6> link_status_width;                          // Negotiated Link Width
static_assert(link_status_width.of(0x1043) == 4 && link_status_speed.of(0x1043) == 3);  // LnkSta 0x1043: 8 GT/s x4

// §7.7.2: the MSI-X capability. The table has one 16-byte entry per vector, in the BAR
// that Table BIR names at Table Offset; the Pending Bit Array likewise.
inline constexpr std::uint32_t msix_message_control = 0x2;  // 16 bits
inline constexpr std::uint32_t msix_table = 0x4;            // 32 bits: BIR and offset
inline constexpr std::uint32_t msix_pba = 0x8;              // 32 bits: BIR and offset
inline constexpr std::uint32_t msix_bytes = 0xc;
inline constexpr little_endian::Field<0, 11> msix_table_size;  // vectors - 1
inline constexpr std::uint16_t msix_function_mask = 0x4000;
inline constexpr std::uint16_t msix_enable = 0x8000;
inline constexpr little_endian::Field<0, 3> msix_bir;
inline constexpr std::uint32_t msix_offset_mask = 0xffff'fff8;
inline constexpr std::uint64_t msix_entry_bytes = 16;
static_assert(msix_table_size.of(0x8007) == 7);

}  // namespace rig::pci::config
