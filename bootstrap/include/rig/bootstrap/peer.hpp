// rig/bootstrap/peer.hpp: rig's connection-setup protocol on a Stream: versioned,
// length-prefixed JSON messages (the message set and its order: messages.hpp).
//
// A message on the wire is a 12-byte header and a payload:
//   bytes 0-3   magic, the ASCII letters "RIGB" (0x52 0x49 0x47 0x42)
//   bytes 4-7   protocol version, big-endian (1)
//   bytes 8-11  payload length in bytes, big-endian, at most max_message_bytes
//   payload     one JSON object (RFC 8259, UTF-8) whose "type" names the message:
//     {"type":"hello","role":"sender"|"receiver",
//      "job":{"size":N,"chunk":N,"depth":N,"mode":"send"|"read","choice":"both"|"auto"|"p2p"|"bounce"},
//      "cable_port":N}  (optional, 1 to 65535)
//     {"type":"queue_pair","qpn":N,"psn":N,"gid":"::ffff:10.77.0.1","mac":"02:00:00:00:00:01",
//      "mtu":256|512|1024|2048|4096,"max_qp_rd_atom":N,"max_qp_init_rd_atom":N}
//     {"type":"path","path":"p2p"|"bounce","opened":true|false,"reason":"...",
//      "regions":[{"address":N,"rkey":N,"bytes":N}, ...]}
//     {"type":"ready","path":...}   {"type":"staged","path":...,"chunks":N}
//     {"type":"consumed","path":...,"chunks":N}
//     {"type":"outcome","path":...,"bytes":N,"checksum":N,"failed":"..."}
//     {"type":"error","message":"..."}
//   Numbers are JSON integers (64-bit values exact: address, checksum); QPN and PSN are
//   below 2^24, rkey below 2^32, size, chunk and depth above 0. Fields a version-1 reader
//   does not know are ignored; every field above is required but "cable_port".
//
// A peer that is not speaking this protocol gets an Error naming its address and what was
// wrong, and nothing of its message is taken further: another magic or version, a length
// above the limit (refused from the header, before any byte of it is read or allocated),
// a payload that is not JSON, a type that is unknown or not the one expected, a missing
// or mistyped field ("in the \"queue_pair\" message, \"qpn\" is \"x\", not an unsigned
// integer"), a peer that closes the connection or resets it in the middle, or one that
// does not send a header or the payload it announced within the timeout.
//
// After any error of a send or receive the Peer closes the connection, so that the peer
// sees it end and nothing of a broken exchange stays connected; every later send and
// receive is an Error naming the peer and the first error.
//
// Thread safety: one thread at a time.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "rig/bootstrap/messages.hpp"
#include "rig/bootstrap/stream.hpp"

namespace rig::bootstrap {

inline constexpr std::array<char, 4> frame_magic = {'R', 'I', 'G', 'B'};
inline constexpr std::uint32_t protocol_version = 1;
inline constexpr std::size_t frame_header_bytes = 12;
// Of one payload; the largest message of p2p_copy's job is a few hundred bytes.
inline constexpr std::uint32_t max_message_bytes = 1 << 20;

class Peer {
public:
    // `timeout`: how long a send may take, and a receive for each of a message's header and payload.
    explicit Peer(Stream stream, Timeout timeout = std::chrono::seconds(30))
        : stream_(std::move(stream)), timeout_(timeout) {}

    // "127.0.0.1:40312": the start of every error message.
    const std::string& address() const { return stream_.peer(); }

    // Error naming the peer where the stream takes the message too slowly or the peer went away.
    Result<void> send(const Message& message);

    // The next message, whatever its type (a Failure among them).
    Result<Message> receive();
    // The next message, which must be a T. A Failure from the peer is an Error:
    // "127.0.0.1:40312: gave up: <its message>".
    template <class T>
    Result<T> receive() {
        auto m = receive_as(type_name<T>());
        if (!m) return std::unexpected(std::move(m).error());
        return std::get<T>(std::move(*m));
    }
    // nullopt where no byte of a message arrives within `wait`; else the whole message
    // (the rest of it under the timeout), as receive().
    Result<std::optional<Message>> poll(Timeout wait);

    // Closes the connection now (the destructor does it otherwise); later sends and
    // receives are Errors.
    void close() { stream_.close(); }
    // Whether the connection is closed: by close(), or after an error (which error() returns).
    bool closed() const { return stream_.closed(); }
    const std::string& error() const { return error_; }
    // The stream back, to speak another protocol on it or to change the timeout.
    Stream stream() && { return std::move(stream_); }

private:
    // The message, which must be of type `expected` unless it is null.
    Result<Message> receive_as(const char* expected);
    Result<Message> read_message(const char* expected);
    // Closes the stream and keeps `error` for later calls; returns it.
    std::unexpected<std::string> broken(std::string error);
    // The Error of a call on a closed connection.
    std::unexpected<std::string> refused(std::string_view what) const;
    Stream stream_;
    Timeout timeout_;
    std::string error_;  // the first error, after which the connection was closed
};

}  // namespace rig::bootstrap
