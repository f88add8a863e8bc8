// VFIO INFO ioctls with the argsz retry, and their capability chains (vfio_info.hpp).
#include "vfio_info.hpp"

#include <linux/vfio.h>

#include <algorithm>
#include <cstring>

#include "rig/little_endian.hpp"

namespace rig::pci::vfio {
namespace {

constexpr std::size_t max_info_bytes = 64 * 1024;
constexpr int max_tries = 4;

std::uint32_t argsz_of(std::span<const std::byte> bytes) { return little_endian::load<std::uint32_t>(bytes); }

}  // namespace

Result<std::vector<std::byte>> get_info(Kernel& kernel, int fd, unsigned long request, std::span<const std::byte> query,
                                        const std::string& what) {
    std::vector<std::byte> buffer(query.begin(), query.end());
    for (int attempt = 0; attempt < max_tries; ++attempt) {
        const std::uint32_t given = static_cast<std::uint32_t>(buffer.size());
        little_endian::store(std::span(buffer), given);
        auto r = kernel.ioctl(fd, request, buffer.data());
        if (!r) return fail(what, " failed: ", errno_text(r.error()));
        const std::uint32_t wanted = argsz_of(buffer);
        if (wanted <= given) return buffer;
        if (wanted > max_info_bytes)
            return fail(what, ": the kernel asks for ", std::to_string(wanted), " bytes of answer, more than ",
                        std::to_string(max_info_bytes));
        // Ask again with room for the capabilities: the query fields as first given, zeros after.
        buffer.assign(wanted, std::byte{0});
        std::copy(query.begin(), query.end(), buffer.begin());
    }
    return fail(what, ": the kernel kept raising argsz after ", std::to_string(max_tries), " tries");
}

std::vector<Capability> capabilities(std::span<const std::byte> info, std::uint32_t first) {
    std::vector<Capability> chain;
    std::uint64_t at = first;
    std::uint64_t floor = 0;  // the next header must lie past the one before
    while (at != 0 && at >= floor && at + sizeof(vfio_info_cap_header) <= info.size()) {
        vfio_info_cap_header header{};
        std::memcpy(&header, info.data() + at, sizeof header);
        chain.push_back({header.id, header.version, info.subspan(static_cast<std::size_t>(at))});
        floor = at + sizeof header;
        at = header.next;
    }
    return chain;
}

}  // namespace rig::pci::vfio
