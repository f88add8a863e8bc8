// tests/nic/bnxt/hsi/bytes.hpp: bytes assembled by hand from a spec table, to pin a wire
// layout against. `put` writes a little-endian value at the offset the table gives; the
// struct under test is never used to build the expectation.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "rig/little_endian.hpp"

namespace rig::bnxt::hsi::test {

struct Bytes {
    explicit Bytes(std::size_t n) : b(n, 0) {}
    // `width` bytes of `value`, least significant first, at byte `offset`.
    Bytes& put(std::size_t offset, std::size_t width, std::uint64_t value) {
        for (std::size_t i = 0; i < width; ++i) b.at(offset + i) = static_cast<std::uint8_t>(value >> (8 * i));
        return *this;
    }
    Bytes& put_bytes(std::size_t offset, std::vector<std::uint8_t> bytes) {
        for (std::size_t i = 0; i < bytes.size(); ++i) b.at(offset + i) = bytes[i];
        return *this;
    }
    std::vector<std::uint8_t> b;
};

template <class T>
std::vector<std::uint8_t> bytes_of(const T& value) {
    std::vector<std::uint8_t> out(sizeof(T));
    std::memcpy(out.data(), &value, sizeof(T));
    return out;
}

// The struct's bytes equal the table's, and loading the table's bytes gives them back.
template <class T>
void expect_layout(const T& value, const Bytes& expected) {
    ASSERT_EQ(sizeof(T), expected.b.size());
    EXPECT_EQ(bytes_of(value), expected.b);
}

}  // namespace rig::bnxt::hsi::test
