// The process-wide registry of reserved address ranges (rig/pci/reservation.hpp).
//
// The registry holds disjoint, merged ranges [begin, end). Reserving maps only the gaps
// of the request that the registry does not hold yet, each with one PROT_NONE mapping
// placed by MAP_FIXED_NOREPLACE, which fails with EEXIST where any page of it is mapped
// already (mmap(2)). Kernels before 4.17 ignore the flag and treat the address as a
// hint: a mapping that lands elsewhere is undone and reported. A request that fails
// leaves nothing new mapped.
#include "rig/pci/reservation.hpp"

#include <fmt/format.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <stdexcept>
#include <utility>
#include <vector>

#include "rig/text.hpp"

namespace rig::pci {
namespace {

struct Registry {
    std::mutex mutex;
    std::map<std::uintptr_t, std::uintptr_t> ranges;  // begin -> end, disjoint and merged
};

Registry& registry() {
    static Registry r;  // lives until the process ends, as the mappings do
    return r;
}

std::string range_text(std::uintptr_t begin, std::uintptr_t end) {
    return fmt::format("[{}, {})", text::hex(begin), text::hex(end));
}

// The parts of [begin, end) that `ranges` does not hold, in address order.
std::vector<std::pair<std::uintptr_t, std::uintptr_t>> gaps(const std::map<std::uintptr_t, std::uintptr_t>& ranges,
                                                            std::uintptr_t begin, std::uintptr_t end) {
    std::vector<std::pair<std::uintptr_t, std::uintptr_t>> out;
    auto it = ranges.upper_bound(begin);
    if (it != ranges.begin()) --it;
    std::uintptr_t at = begin;
    for (; it != ranges.end() && it->first < end && at < end; ++it) {
        if (it->second <= at) continue;
        if (it->first > at) out.emplace_back(at, it->first);
        at = it->second;
    }
    if (at < end) out.emplace_back(at, end);
    return out;
}

void insert_merged(std::map<std::uintptr_t, std::uintptr_t>& ranges, std::uintptr_t begin, std::uintptr_t end) {
    auto it = ranges.upper_bound(begin);
    if (it != ranges.begin() && std::prev(it)->second >= begin) --it;
    while (it != ranges.end() && it->first <= end) {
        begin = std::min(begin, it->first);
        end = std::max(end, it->second);
        it = ranges.erase(it);
    }
    ranges.emplace(begin, end);
}

}  // namespace

Result<void> reserve_addresses(std::uintptr_t base, std::uint64_t bytes) {
    const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
    if (bytes == 0 || base % page != 0 || bytes % page != 0 || base + bytes < base)
        throw std::invalid_argument(
            fmt::format("reserve: {} bytes at {} is not a range of whole {}-byte pages", bytes, text::hex(base), page));
    const std::uintptr_t end = base + bytes;
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    std::vector<std::pair<std::uintptr_t, std::uintptr_t>> mapped;
    auto undo = [&] {
        for (const auto& [b, e] : mapped) ::munmap(reinterpret_cast<void*>(b), e - b);
    };
    for (const auto& [b, e] : gaps(r.ranges, base, end)) {
        void* want = reinterpret_cast<void*>(b);
        void* got =
            ::mmap(want, e - b, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
        if (got == MAP_FAILED) {
            const int error = errno;
            undo();
            if (error == EEXIST)
                return fail("reserve ", range_text(base, end), ": ", range_text(b, e),
                            " is in use by another mapping of this process");
            return fail("reserve ", range_text(base, end), ": mmap of ", range_text(b, e),
                        " failed: ", std::strerror(error));
        }
        if (got != want) {
            ::munmap(got, e - b);
            undo();
            return fail("reserve ", range_text(base, end),
                        ": the system placed the mapping elsewhere (MAP_FIXED_NOREPLACE needs Linux 4.17 or later)");
        }
        mapped.emplace_back(b, e);
    }
    for (const auto& [b, e] : mapped) insert_merged(r.ranges, b, e);
    return {};
}

bool is_reserved(std::uintptr_t base, std::uint64_t bytes) {
    if (bytes == 0 || base + bytes < base) return false;
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    return gaps(r.ranges, base, base + bytes).empty();
}

}  // namespace rig::pci
