// The host's fill and checksum (rig/gpu/reference.hpp), word by word with pattern.hpp's
// own functions, so that host and GPU share one definition.
#include "rig/gpu/reference.hpp"

#include "rig/gpu/pattern.hpp"

namespace rig::gpu::reference {
namespace {

unsigned char* first(std::span<std::byte> bytes) { return reinterpret_cast<unsigned char*>(bytes.data()); }
const unsigned char* first(std::span<const std::byte> bytes) {
    return reinterpret_cast<const unsigned char*>(bytes.data());
}

}  // namespace

void fill(std::span<std::byte> bytes, std::uint64_t seed) {
    for (std::uint64_t i = 0; i < pattern::words(bytes.size()); ++i)
        pattern::store_word(first(bytes), bytes.size(), i, pattern::fill_word(seed, i));
}

std::uint64_t checksum(std::span<const std::byte> bytes) {
    std::uint64_t sum = 0;
    for (std::uint64_t i = 0; i < pattern::words(bytes.size()); ++i)
        sum += pattern::term(pattern::load_word(first(bytes), bytes.size(), i), i);
    return pattern::finish(sum, bytes.size());
}

std::uint64_t fill_checksum(std::uint64_t seed, std::uint64_t bytes) {
    std::uint64_t sum = 0;
    for (std::uint64_t i = 0; i < pattern::words(bytes); ++i) {
        const std::uint64_t tail = bytes - i * 8;  // bytes of the range from word i on
        const std::uint64_t kept = tail >= 8 ? ~std::uint64_t{0} : (std::uint64_t{1} << (8 * tail)) - 1;
        sum += pattern::term(pattern::fill_word(seed, i) & kept, i);
    }
    return pattern::finish(sum, bytes);
}

}  // namespace rig::gpu::reference
