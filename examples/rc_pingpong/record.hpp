// Fixed-layout text records, as rdma-core's and perftest's tools write them with sprintf:
// hexadecimal fields of a fixed width at fixed offsets, ':' between them, a NUL at the
// end. One reader checks each byte where it stands and names the field and byte of the
// first one that is wrong; the writers are in the codecs that use it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "rig/result.hpp"

namespace rc_pingpong {

class Record {
public:
    // `what` names the record in errors ("the remote address").
    Record(std::span<const std::byte> bytes, std::string_view what) : bytes_(bytes), what_(what) {}

    // Error unless the record is exactly `size` bytes.
    rig::Result<void> size(std::size_t size) const;
    // The `digits` hexadecimal digits (either case) at `offset`, `field` naming them.
    rig::Result<std::uint64_t> hex(std::size_t offset, std::size_t digits, std::string_view field) const;
    // Error unless the byte at `offset` is `c` (':' between fields, '\0' at the end).
    rig::Result<void> expect(std::size_t offset, char c) const;

private:
    // "byte 5 of the remote address is 'g' (0x67)": the byte as text where it is printable.
    std::string at(std::size_t offset) const;
    std::span<const std::byte> bytes_;
    std::string_view what_;
};

}  // namespace rc_pingpong
