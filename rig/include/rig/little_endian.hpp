// rig/little_endian.hpp: fixed-width little-endian fields and bit fields for wire layouts.
//
// Hardware structures (configuration space, the bnxt HSI) are structs of Le16/Le32/Le64
// in spec-table order, with their size and offsets asserted beside them
// (docs/design.md, "Hardware structures"). The byte order lives here and nowhere else:
// std::byteswap appears only inside these wrappers. A sub-field of a word is a
// Field<lo, width>; `encode`/`decode` on it are constexpr, so a value worked out by hand
// from a spec table can be pinned with static_assert.
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <type_traits>

namespace rig::little_endian {

// An unsigned little-endian integer of sizeof(T) bytes, stored as bytes so that a
// struct of them has no padding and alignment 1 (layouts are placed at any offset).
template <class T>
class Le {
    static_assert(std::is_unsigned_v<T>);

public:
    constexpr Le() = default;
    constexpr Le(T value) { set(value); }  // NOLINT: implicit, as an integer field
    constexpr T get() const {
        if (!std::is_constant_evaluated() && std::endian::native == std::endian::little) {
            T value;  // one load: the bytes are already in the host's order
            std::memcpy(&value, bytes_.data(), sizeof(T));
            return value;
        }
        T value{};
        for (std::size_t i = 0; i < sizeof(T); ++i) value |= static_cast<T>(static_cast<T>(bytes_[i]) << (8 * i));
        return value;
    }
    constexpr void set(T value) {
        if (!std::is_constant_evaluated() && std::endian::native == std::endian::little) {
            std::memcpy(bytes_.data(), &value, sizeof(T));  // one store (drivers' hot paths build WQEs of these)
            return;
        }
        for (std::size_t i = 0; i < sizeof(T); ++i) bytes_[i] = static_cast<std::uint8_t>(value >> (8 * i));
    }
    constexpr operator T() const { return get(); }  // NOLINT
    constexpr Le& operator=(T value) {
        set(value);
        return *this;
    }

private:
    std::array<std::uint8_t, sizeof(T)> bytes_{};
};

using Le16 = Le<std::uint16_t>;
using Le32 = Le<std::uint32_t>;
using Le64 = Le<std::uint64_t>;
static_assert(sizeof(Le64) == 8 && alignof(Le64) == 1);

// Bits [lo, lo + width) of an unsigned word.
template <unsigned Lo, unsigned Width>
struct Field {
    static_assert(Width > 0 && Lo + Width <= 64);
    static constexpr unsigned lo = Lo;
    static constexpr unsigned width = Width;
    static constexpr std::uint64_t mask = (Width == 64 ? ~std::uint64_t{0} : ((std::uint64_t{1} << Width) - 1)) << Lo;

    // The field's value placed in a word; bits of value beyond the width are dropped.
    constexpr std::uint64_t operator()(std::uint64_t value) const { return (value << Lo) & mask; }
    // The field's value read out of a word.
    constexpr std::uint64_t of(std::uint64_t word) const { return (word & mask) >> Lo; }
};

// Bytes to a layout and back, without casting a byte pointer (docs/design.md).
template <class T>
T load(std::span<const std::byte> bytes) {
    static_assert(std::is_trivially_copyable_v<T>);
    T value{};
    std::memcpy(&value, bytes.data(), bytes.size() < sizeof(T) ? bytes.size() : sizeof(T));
    return value;
}

template <class T>
void store(std::span<std::byte> bytes, const T& value) {
    static_assert(std::is_trivially_copyable_v<T>);
    std::memcpy(bytes.data(), &value, bytes.size() < sizeof(T) ? bytes.size() : sizeof(T));
}

template <class T>
std::span<const std::byte, sizeof(T)> bytes_of(const T& value) {
    return std::span<const std::byte, sizeof(T)>(reinterpret_cast<const std::byte*>(&value), sizeof(T));
}

}  // namespace rig::little_endian
