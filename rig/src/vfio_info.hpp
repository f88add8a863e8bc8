// VFIO's INFO ioctls and their capability chains (internal to rig_pci; linux/vfio.h,
// "INFO ioctls"). The fact that bites (DPDK's pci_vfio.c writes it down too): a caller
// passes a structure whose first field, argsz, says how big it is; where capabilities
// follow, the kernel answers success, sets the CAPS flag and raises argsz to the size it
// needs, and the caller must ask again with a buffer that large. A capability chain is a
// list of (id, version, next) headers at offsets from the start of the buffer; next 0
// ends it. A chain from the kernel is trusted no further than the buffer: every offset is
// checked against it and each next must lie past the header before, so a bad chain ends.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "rig/result.hpp"
#include "vfio_kernel.hpp"

namespace rig::pci::vfio {

// Issues `request` on `fd` with `query` (a filled structure whose first 4 bytes are
// argsz) and, while the kernel raises argsz, again with a buffer of the size it asks
// (at most 64 KiB, at most 4 tries). The answer's bytes, argsz long. Error naming `what`
// and the errno.
Result<std::vector<std::byte>> get_info(Kernel& kernel, int fd, unsigned long request, std::span<const std::byte> query,
                                        const std::string& what);

// One capability of a chain: its id and version, and its bytes from its header on
// (header included) to the end of the buffer.
struct Capability {
    std::uint16_t id = 0;
    std::uint16_t version = 0;
    std::span<const std::byte> bytes;
};

// The capabilities of `info` from offset `first` on. A header that does not fit, or a
// next that does not move forward, ends the chain.
std::vector<Capability> capabilities(std::span<const std::byte> info, std::uint32_t first);

}  // namespace rig::pci::vfio
