// The Ethernet CRC-32 (crc32.hpp): slice-by-8 tables built at compile time, and 64-byte
// folding with PCLMULQDQ where the CPU has it (chosen once, at the first call).
//
// Folding (Gopal et al., Intel 2009, §"Folding"; bit-reflected domain): the message, with
// the register XORed into its first four bytes, is read as 128-bit lanes. A lane L bits
// ahead of another is brought level with it by multiplying its two 64-bit halves by
// x^(L+32) mod P and x^(L-32) mod P (the constants below, reflected and shifted by one as
// the paper gives them) and XORing the products into it. Four lanes step 512 bits at a
// time, then fold into one lane 128 bits at a time. The last lane is congruent to the
// whole message modulo P, so the table-driven CRC of its 16 bytes from a zero register is
// the CRC of the message (the CRC of a zero register is linear in the message and sees
// only its remainder modulo P): no Barrett reduction is needed.
#include "crc32.hpp"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace rig::bnxt::sim::detail {
namespace {

constexpr std::uint32_t polynomial = 0xEDB88320;  // 0x04C11DB7 bit-reflected

using Tables = std::array<std::array<std::uint32_t, 256>, 8>;

constexpr Tables make_tables() {
    Tables t{};
    for (std::uint32_t n = 0; n < 256; ++n) {
        std::uint32_t c = n;
        for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ polynomial : c >> 1;
        t[0][n] = c;
    }
    for (std::size_t k = 1; k < 8; ++k)
        for (std::size_t n = 0; n < 256; ++n) t[k][n] = (t[k - 1][n] >> 8) ^ t[0][t[k - 1][n] & 0xFF];
    return t;
}

constexpr Tables tables = make_tables();
static_assert(tables[0][1] == 0x77073096 && tables[0][255] == 0x2D02EF8D);  // the classic table's entries

std::uint32_t by_tables(std::uint32_t reg, const unsigned char* p, std::size_t n) {
    while (n >= 8) {
        std::uint64_t v = 0;
        std::memcpy(&v, p, 8);  // little-endian: the first byte in the low bits
        v ^= reg;
        reg = tables[7][v & 0xFF] ^ tables[6][(v >> 8) & 0xFF] ^ tables[5][(v >> 16) & 0xFF] ^
              tables[4][(v >> 24) & 0xFF] ^ tables[3][(v >> 32) & 0xFF] ^ tables[2][(v >> 40) & 0xFF] ^
              tables[1][(v >> 48) & 0xFF] ^ tables[0][v >> 56];
        p += 8;
        n -= 8;
    }
    while (n-- > 0) reg = (reg >> 8) ^ tables[0][(reg ^ *p++) & 0xFF];
    return reg;
}

#if defined(__x86_64__)

// Gopal et al., the constants for the CRC-32 of IEEE 802.3 in the reflected domain.
constexpr std::uint64_t k1 = 0x154442BD4;  // 512-bit distance: x^(512+32) mod P
constexpr std::uint64_t k2 = 0x1C6E41596;  //                   x^(512-32) mod P
constexpr std::uint64_t k3 = 0x1751997D0;  // 128-bit distance: x^(128+32) mod P
constexpr std::uint64_t k4 = 0x0CCAA009E;  //                   x^(128-32) mod P

__attribute__((target("pclmul,sse2"))) inline __m128i fold(__m128i lane, __m128i k, __m128i next) {
    const __m128i low = _mm_clmulepi64_si128(lane, k, 0x00);
    const __m128i high = _mm_clmulepi64_si128(lane, k, 0x11);
    return _mm_xor_si128(_mm_xor_si128(low, high), next);
}

__attribute__((target("pclmul,sse2"))) inline __m128i load(const unsigned char* p) {
    return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
}

// n >= 64: folds the first n rounded down to 16 bytes; returns the register after them.
__attribute__((target("pclmul,sse2"))) std::uint32_t by_folding(std::uint32_t reg, const unsigned char* p,
                                                                 std::size_t n) {
    __m128i x0 = _mm_xor_si128(load(p), _mm_cvtsi32_si128(static_cast<int>(reg)));
    __m128i x1 = load(p + 16), x2 = load(p + 32), x3 = load(p + 48);
    p += 64;
    n -= 64;
    const __m128i by4 = _mm_set_epi64x(static_cast<long long>(k2), static_cast<long long>(k1));
    while (n >= 64) {
        x0 = fold(x0, by4, load(p));
        x1 = fold(x1, by4, load(p + 16));
        x2 = fold(x2, by4, load(p + 32));
        x3 = fold(x3, by4, load(p + 48));
        p += 64;
        n -= 64;
    }
    const __m128i by1 = _mm_set_epi64x(static_cast<long long>(k4), static_cast<long long>(k3));
    x0 = fold(x0, by1, x1);
    x0 = fold(x0, by1, x2);
    x0 = fold(x0, by1, x3);
    while (n >= 16) {
        x0 = fold(x0, by1, load(p));
        p += 16;
        n -= 16;
    }
    unsigned char lane[16];
    _mm_storeu_si128(reinterpret_cast<__m128i*>(lane), x0);
    return by_tables(0, lane, sizeof lane);
}

bool cpu_folds() { return __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse2"); }

#else

std::uint32_t by_folding(std::uint32_t reg, const unsigned char* p, std::size_t n) { return by_tables(reg, p, n); }
bool cpu_folds() { return false; }

#endif

const bool folds = cpu_folds();

}  // namespace

std::uint32_t crc32_update(std::uint32_t reg, std::span<const std::byte> bytes) {
    const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
    std::size_t n = bytes.size();
    if (folds && n >= 64) {
        const std::size_t folded = n & ~std::size_t{15};
        reg = by_folding(reg, p, folded);
        p += folded;
        n -= folded;
    }
    return by_tables(reg, p, n);
}

std::uint32_t crc32_update_tables(std::uint32_t reg, std::span<const std::byte> bytes) {
    return by_tables(reg, reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size());
}

bool crc32_folds() { return folds; }

}  // namespace rig::bnxt::sim::detail
