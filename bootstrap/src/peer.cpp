// Framed messages on a Stream (peer.hpp): the 12-byte header, then the JSON payload.
//
// A receive reads the header first and judges it whole (magic, version, length) before it
// reads or allocates any byte of the payload, so a peer that announces 4 GiB costs
// nothing. The header and the payload each have the timeout.
#include "rig/bootstrap/peer.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

#include "codec.hpp"
#include "rig/text.hpp"

namespace rig::bootstrap {
namespace {

void put_be32(std::byte* at, std::uint32_t v) {
    for (int i = 0; i < 4; ++i) at[i] = static_cast<std::byte>(v >> (24 - 8 * i));
}
std::uint32_t be32(const std::byte* at) {
    std::uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v = v << 8 | std::to_integer<std::uint32_t>(at[i]);
    return v;
}

constexpr std::uint32_t magic_value = 0x5249'4742;  // frame_magic read as big-endian
static_assert(frame_magic[0] == (magic_value >> 24) && frame_magic[3] == (magic_value & 0xff));

}  // namespace

std::unexpected<std::string> Peer::broken(std::string error) {
    stream_.close();
    if (error_.empty()) error_ = error;
    return std::unexpected(std::move(error));
}

std::unexpected<std::string> Peer::refused(std::string_view what) const {
    if (error_.empty()) return fail(address(), ": ", what, ": the connection is closed");
    // The first error starts with the address already.
    return fail(address(), ": ", what, ": the connection was closed after an error: ",
                std::string_view(error_).substr(std::min(error_.size(), address().size() + 2)));
}

Result<void> Peer::send(const Message& message) {
    const std::string payload = codec::encode(message);
    if (payload.size() > max_message_bytes)
        throw std::invalid_argument("rig::bootstrap::Peer::send: a \"" + std::string(type_name(message)) + "\" of " +
                                    std::to_string(payload.size()) + " bytes is above max_message_bytes");
    const std::string what = "the \"" + std::string(type_name(message)) + "\" message";
    if (stream_.closed()) return refused("not sending " + what);
    std::vector<std::byte> frame(frame_header_bytes + payload.size());
    std::memcpy(frame.data(), frame_magic.data(), frame_magic.size());
    put_be32(frame.data() + 4, protocol_version);
    put_be32(frame.data() + 8, static_cast<std::uint32_t>(payload.size()));
    std::memcpy(frame.data() + frame_header_bytes, payload.data(), payload.size());
    if (auto r = stream_.write(frame, timeout_, what); !r) return broken(std::move(r).error());
    return {};
}

Result<Message> Peer::receive() { return receive_as(nullptr); }

Result<std::optional<Message>> Peer::poll(Timeout wait) {
    if (stream_.closed()) return refused("no next message");
    auto ready = stream_.readable(wait);
    if (!ready) return broken(std::move(ready).error());
    if (!*ready) return std::optional<Message>{};
    auto m = receive_as(nullptr);
    if (!m) return std::unexpected(std::move(m).error());
    return std::optional<Message>(std::move(*m));
}

Result<Message> Peer::receive_as(const char* expected) {
    if (stream_.closed())
        return refused(expected ? "no \"" + std::string(expected) + "\"" : std::string("no next message"));
    auto m = read_message(expected);
    if (!m) return broken(std::move(m).error());
    return m;
}

Result<Message> Peer::read_message(const char* expected) {
    const std::string what = expected ? "\"" + std::string(expected) + "\"" : std::string("the next message");
    std::array<std::byte, frame_header_bytes> header;
    if (auto r = stream_.read(header, timeout_, "the header of " + what); !r)
        return std::unexpected(std::move(r).error());
    if (std::memcmp(header.data(), frame_magic.data(), frame_magic.size()) != 0)
        return fail(address(), ": does not speak rig's bootstrap protocol: a message starts with ",
                    text::hex(be32(header.data()), 8), ", not ", text::hex(magic_value, 8), " (\"RIGB\")");
    if (const auto version = be32(header.data() + 4); version != protocol_version)
        return fail(address(), ": speaks rig's bootstrap protocol version ", std::to_string(version),
                    "; this side speaks version ", std::to_string(protocol_version));
    const std::uint32_t bytes = be32(header.data() + 8);
    if (bytes > max_message_bytes)
        return fail(address(), ": announced a message of ", std::to_string(bytes), " bytes; the limit is ",
                    std::to_string(max_message_bytes));
    std::string payload(bytes, '\0');
    if (auto r = stream_.read(std::as_writable_bytes(std::span(payload)), timeout_, what); !r)
        return std::unexpected(std::move(r).error());
    auto message = codec::decode(payload, expected);
    if (!message) return fail(address(), ": ", message.error());
    if (expected && std::holds_alternative<Failure>(*message) && std::string_view(expected) != "error")
        return fail(address(), ": gave up: ", std::get<Failure>(*message).message);
    return message;
}

}  // namespace rig::bootstrap
