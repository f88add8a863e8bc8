// The Ethernet CRC-32 (crc32.hpp): slice-by-8 tables built at compile time, 64-byte folding
// with PCLMULQDQ and 512-byte folding with VPCLMULQDQ where the CPU has them (chosen once,
// when the library is loaded).
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
// GCC 12's AVX-512 intrinsics declare their undefined operand as `__m512i __Y = __Y;`, which
// -Wuninitialized reports wherever one is inlined (GCC bug 105593, fixed in GCC 13).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
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

// Gopal et al., the constants for the CRC-32 of IEEE 802.3 in the reflected domain: for a
// lane L bits ahead, x^(L+32) mod P for its low half and x^(L-32) mod P for its high half,
// each bit-reflected in 32 bits and shifted left by one (the paper's k1..k4; those of 4096
// bits worked out the same way, and all of them checked by the tests against the tables).
constexpr std::uint64_t k512_low = 0x154442BD4;
constexpr std::uint64_t k512_high = 0x1C6E41596;
constexpr std::uint64_t k128_low = 0x1751997D0;
constexpr std::uint64_t k128_high = 0x0CCAA009E;
constexpr std::uint64_t k4096_low = 0x01072DB28;
constexpr std::uint64_t k4096_high = 0x1D741F35C;

__attribute__((target("pclmul,sse2"))) inline __m128i fold(__m128i lane, __m128i k, __m128i next) {
    const __m128i low = _mm_clmulepi64_si128(lane, k, 0x00);
    const __m128i high = _mm_clmulepi64_si128(lane, k, 0x11);
    return _mm_xor_si128(_mm_xor_si128(low, high), next);
}

__attribute__((target("pclmul,sse2"))) inline __m128i load(const unsigned char* p) {
    return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
}

__attribute__((target("pclmul,sse2"))) inline __m128i pair(std::uint64_t low, std::uint64_t high) {
    return _mm_set_epi64x(static_cast<long long>(high), static_cast<long long>(low));
}

// The register after the table-driven CRC of the last lane from a zero register.
__attribute__((target("pclmul,sse2"))) std::uint32_t finish(__m128i lane) {
    unsigned char bytes[16];
    _mm_storeu_si128(reinterpret_cast<__m128i*>(bytes), lane);
    return by_tables(0, bytes, sizeof bytes);
}

// n >= 64, a multiple of 16: the register after the n bytes, four 128-bit lanes at a time.
__attribute__((target("pclmul,sse2"))) std::uint32_t by_folding(std::uint32_t reg, const unsigned char* p,
                                                                std::size_t n) {
    __m128i x0 = _mm_xor_si128(load(p), _mm_cvtsi32_si128(static_cast<int>(reg)));
    __m128i x1 = load(p + 16), x2 = load(p + 32), x3 = load(p + 48);
    p += 64;
    n -= 64;
    const __m128i by4 = pair(k512_low, k512_high);
    while (n >= 64) {
        x0 = fold(x0, by4, load(p));
        x1 = fold(x1, by4, load(p + 16));
        x2 = fold(x2, by4, load(p + 32));
        x3 = fold(x3, by4, load(p + 48));
        p += 64;
        n -= 64;
    }
    const __m128i by1 = pair(k128_low, k128_high);
    x0 = fold(x0, by1, x1);
    x0 = fold(x0, by1, x2);
    x0 = fold(x0, by1, x3);
    for (; n >= 16; p += 16, n -= 16) x0 = fold(x0, by1, load(p));
    return finish(x0);
}

#define RIG_WIDE __attribute__((target("avx512f,vpclmulqdq,pclmul,sse2")))

RIG_WIDE inline __m512i fold(__m512i lanes, __m512i k, __m512i next) {
    const __m512i low = _mm512_clmulepi64_epi128(lanes, k, 0x00);
    const __m512i high = _mm512_clmulepi64_epi128(lanes, k, 0x11);
    return _mm512_ternarylogic_epi64(low, high, next, 0x96);  // low ^ high ^ next
}

RIG_WIDE inline __m512i load_wide(const unsigned char* p) { return _mm512_loadu_si512(p); }

// n >= 512, a multiple of 16: the same with VPCLMULQDQ on eight 512-bit registers of four
// lanes each, 512 bytes at a time (eight, not four: a 512-bit carry-less multiply takes
// two cycles on AMD's Zen 4, and four registers left it waiting, 88 against 72 ns for 4 KiB
// there); then the registers folded into one, 64 bytes at a time, its four lanes into one,
// and 16 bytes at a time as above.
RIG_WIDE std::uint32_t by_wide_folding(std::uint32_t reg, const unsigned char* p, std::size_t n) {
    constexpr int registers = 8;
    __m512i z[registers];
    for (int i = 0; i < registers; ++i) z[i] = load_wide(p + 64 * i);
    z[0] = _mm512_xor_si512(z[0], _mm512_set_epi64(0, 0, 0, 0, 0, 0, 0, static_cast<long long>(reg)));
    p += 64 * registers;
    n -= 64 * registers;
    const __m512i by32 = _mm512_broadcast_i32x4(pair(k4096_low, k4096_high));
    for (; n >= 64 * registers; p += 64 * registers, n -= 64 * registers)
        for (int i = 0; i < registers; ++i) z[i] = fold(z[i], by32, load_wide(p + 64 * i));
    const __m512i by4 = _mm512_broadcast_i32x4(pair(k512_low, k512_high));
    __m512i folded = z[0];
    for (int i = 1; i < registers; ++i) folded = fold(folded, by4, z[i]);
    for (; n >= 64; p += 64, n -= 64) folded = fold(folded, by4, load_wide(p));
    const __m128i by1 = pair(k128_low, k128_high);
    __m128i x = _mm512_extracti32x4_epi32(folded, 0);
    x = fold(x, by1, _mm512_extracti32x4_epi32(folded, 1));
    x = fold(x, by1, _mm512_extracti32x4_epi32(folded, 2));
    x = fold(x, by1, _mm512_extracti32x4_epi32(folded, 3));
    for (; n >= 16; p += 16, n -= 16) x = fold(x, by1, load(p));
    return finish(x);
}

Crc32Path cpu_best() {
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("vpclmulqdq")) return Crc32Path::vpclmulqdq;
    if (__builtin_cpu_supports("pclmul")) return Crc32Path::pclmulqdq;
    return Crc32Path::tables;
}

#else

std::uint32_t by_folding(std::uint32_t reg, const unsigned char* p, std::size_t n) { return by_tables(reg, p, n); }
std::uint32_t by_wide_folding(std::uint32_t reg, const unsigned char* p, std::size_t n) { return by_tables(reg, p, n); }
Crc32Path cpu_best() { return Crc32Path::tables; }

#endif

const Crc32Path best = cpu_best();

}  // namespace

std::uint32_t crc32_update(std::uint32_t reg, std::span<const std::byte> bytes, Crc32Path path) {
    const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
    std::size_t n = bytes.size();
    const std::size_t folded = n & ~std::size_t{15};
    if (path == Crc32Path::vpclmulqdq && n >= 512) {
        reg = by_wide_folding(reg, p, folded);
    } else if (path != Crc32Path::tables && n >= 64) {
        reg = by_folding(reg, p, folded);
    } else {
        return by_tables(reg, p, n);
    }
    return by_tables(reg, p + folded, n - folded);
}

std::uint32_t crc32_update(std::uint32_t reg, std::span<const std::byte> bytes) {
    return crc32_update(reg, bytes, best);
}

Crc32Path crc32_best() { return best; }

}  // namespace rig::bnxt::sim::detail
