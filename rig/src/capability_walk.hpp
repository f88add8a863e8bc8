// The walk of a function's capability list (internal to rig_pci), shared by the topology's
// header parse, Function's accessors and the VFIO device: PCI Local Bus 3.0 §6.7. Status
// bit 4 says a list exists; the Capabilities Pointer at 0x34 names the first; each
// capability's byte 0 is its ID and byte 1 the next one's offset, the low two bits
// reserved. A list lies above the 64-byte header and holds at most 48 capabilities, so a
// walk that loops ends after 48 steps.
#pragma once

#include <cstdint>
#include <optional>

#include "rig/pci/config.hpp"

namespace rig::pci {

// The offset of capability `id`, or nullopt, walked as Linux's __pci_find_next_cap_ttl
// walks it: each pointer at or above 0x40, its low two bits cleared, an ID of 0xff ends the
// list. `read(offset, bytes)` reads 1 or 2 bytes of configuration space.
template <class Read>
std::optional<std::uint32_t> find_capability(Read&& read, std::uint8_t id) {
    constexpr std::uint32_t pointer_mask = 0xfc;
    constexpr std::uint32_t list_end = 0xff;
    if (!(read(config::status, 2) & config::status_capabilities_list)) return std::nullopt;
    std::uint32_t at = read(config::capabilities_pointer, 1);
    for (unsigned step = 0; step < config::capability_limit && at >= config::capability_first; ++step) {
        at &= pointer_mask;
        const std::uint32_t found = read(at + config::capability_id, 1);
        if (found == list_end) return std::nullopt;
        if (found == id) return at;
        at = read(at + config::capability_next, 1);
    }
    return std::nullopt;
}

}  // namespace rig::pci
