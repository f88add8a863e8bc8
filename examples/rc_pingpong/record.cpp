// Reading fixed-layout text records (record.hpp).
#include "record.hpp"

#include "rig/text.hpp"

namespace rc_pingpong {

std::string Record::at(std::size_t offset) const {
    const auto b = std::to_integer<unsigned>(bytes_[offset]);
    std::string shown = b >= 0x20 && b < 0x7f
                            ? "'" + std::string(1, static_cast<char>(b)) + "' (" + rig::text::hex(b, 2) + ")"
                            : rig::text::hex(b, 2);
    return "byte " + std::to_string(offset) + " of " + std::string(what_) + " is " + shown;
}

rig::Result<void> Record::size(std::size_t size) const {
    if (bytes_.size() != size)
        return rig::fail(what_, " is ", std::to_string(bytes_.size()), " bytes, not ", std::to_string(size));
    return {};
}

rig::Result<std::uint64_t> Record::hex(std::size_t offset, std::size_t digits, std::string_view field) const {
    std::uint64_t value = 0;
    for (std::size_t i = offset; i < offset + digits; ++i) {
        const auto c = std::to_integer<unsigned>(bytes_[i]);
        unsigned digit = 0;
        if (c >= '0' && c <= '9') digit = c - '0';
        else if (c >= 'a' && c <= 'f') digit = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F') digit = c - 'A' + 10;
        else return rig::fail(at(i), ", not a hex digit of the ", field);
        value = value << 4 | digit;
    }
    return value;
}

rig::Result<void> Record::expect(std::size_t offset, char c) const {
    if (bytes_[offset] == static_cast<std::byte>(c)) return {};
    return rig::fail(at(offset), ", not ",
                     c == '\0' ? std::string("the NUL that ends it") : "'" + std::string(1, c) + "'");
}

}  // namespace rc_pingpong
