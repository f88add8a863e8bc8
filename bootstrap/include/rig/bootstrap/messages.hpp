// rig/bootstrap/messages.hpp: the messages two processes exchange to run p2p_copy's job
// between them (protocol version 1; the framing and the JSON of each are in peer.hpp).
//
// The sender (machine 1, the side that connects) and the receiver (machine 2, the side
// that listens) exchange, in this order; in each pair the sender writes first:
//
//   sender                                    receiver
//   Hello    {role, job, cable_port}     ->
//                                        <-   Hello    {role, job, cable_port}
//   QueuePair {endpoint, read depths}    ->
//                                        <-   QueuePair {...}
//        each side connects its queue pair to the other's (RTR, RTS)
//   then for each path the job runs (Choice::Both: p2p, then bounce; Auto: p2p, and
//   bounce only where either side refused p2p; P2p, Bounce: that one):
//   PathOpen {path, opened, reason, regions} ->
//                                        <-   PathOpen {...}
//        no transfer where either side did not open the path
//     Mode::SendRecv:                    <-   Ready {path}   (its first receives are posted)
//        the sender sends; the receiver reposts as completions arrive
//     Mode::Read, Path::P2p:                  the receiver reads the sender's region,
//                                        <-   Consumed {path, chunks}: read so far, as
//        often as the receiver chooses and once all are read (the sender's progress)
//     Mode::Read, Path::Bounce: the sender's host slots are reused, so the two keep
//     count, each message cumulative and sent as often as its side chooses:
//       Staged   {path, chunks}          ->   chunks [0, chunks) are in the sender's slots
//                                        <-   Consumed {path, chunks}: read out of them
//        the receiver reads chunk i only once i < staged; the sender stages chunk j
//        into slot j mod depth only once j < consumed + depth
//                                        <-   Outcome {path, bytes, checksum}
//   Outcome  {path, bytes, checksum}     ->
//   the connection closes.
//
// Either side may send Failure {message} instead of any message and then close: it gave up
// (a failed command, a refused job), and the other side's receive is an Error quoting it.
// A Hello whose job differs from the receiver's own is answered with a Failure naming the
// differences (differences()).
//
// Nothing here is simulator-specific but the Hello's optional cable_port, which a side
// without a datagram cable neither sends nor needs: an endpoint is what a RoCEv2 queue
// pair on any NIC needs (IBA 9.7, the connected service's QPN and PSN; the GID and MAC of
// the port), and a region is what an RDMA READ names (address, rkey, length).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "rig/bnxt/qp.hpp"
#include "rig/bnxt/region.hpp"

namespace rig::bootstrap {

enum class Role : std::uint8_t { Sender, Receiver };           // "sender", "receiver"
enum class Path : std::uint8_t { P2p, Bounce };                // "p2p", "bounce"
enum class Choice : std::uint8_t { Both, Auto, P2p, Bounce };  // "both", "auto", "p2p", "bounce"
enum class Mode : std::uint8_t { SendRecv, Read };             // "send", "read"

// What the two processes move, as p2p_copy's options say it: `size` bytes in messages of
// at most `chunk` bytes, at most `depth` of them in flight.
struct Job {
    std::uint64_t size = 0;   // bytes, > 0
    std::uint64_t chunk = 0;  // bytes, > 0
    std::uint32_t depth = 0;  // messages, > 0
    Mode mode = Mode::SendRecv;
    Choice choice = Choice::Both;
    friend bool operator==(const Job&, const Job&) = default;
};

// `cable_port`: where a simulated side's port takes its Ethernet frames, a datagram cable
// (one frame per UDP datagram) at this UDP port of the address the connection reaches it
// at. Absent (a side without such a cable, or a peer that does not send it): the UDP port
// of the same number as its end of the connection.
struct Hello {
    Role role = Role::Sender;
    Job job;
    std::optional<std::uint16_t> cable_port;
    friend bool operator==(const Hello&, const Hello&) = default;
};

// A queue pair's endpoint and how many RDMA READs its NIC takes at once: as responder
// (max_qp_rd_atom) and as initiator (max_qp_init_rd_atom), the depths of nic.hpp's Limits.
// A reader keeps min(its initiator depth, the peer's responder depth) reads in flight.
struct QueuePair {
    bnxt::Endpoint endpoint;
    std::uint32_t max_qp_rd_atom = 1;
    std::uint32_t max_qp_init_rd_atom = 1;
    friend bool operator==(const QueuePair&, const QueuePair&) = default;
};

// A region as a peer names it for RDMA READ: Region::remote(offset) and the bytes from there.
struct RemoteRegion {
    bnxt::Remote remote;
    std::uint64_t bytes = 0;
    friend bool operator==(const RemoteRegion&, const RemoteRegion&) = default;
};

// One side's answer to a path: whether it opened it (its regions registered), why or why
// not in words for the report (the bus verdict, a NIC's refusal), and the regions the peer
// may read: for Mode::Read the sender's source (p2p: its GPU region; bounce: its host
// slots, depth x chunk bytes); empty otherwise.
struct PathOpen {
    Path path = Path::P2p;
    bool opened = false;
    std::string reason;
    std::vector<RemoteRegion> regions;
    friend bool operator==(const PathOpen&, const PathOpen&) = default;
};

struct Ready {
    Path path = Path::P2p;
    friend bool operator==(const Ready&, const Ready&) = default;
};

struct Staged {
    Path path = Path::Bounce;
    std::uint64_t chunks = 0;  // cumulative
    friend bool operator==(const Staged&, const Staged&) = default;
};

struct Consumed {
    Path path = Path::Bounce;
    std::uint64_t chunks = 0;  // cumulative
    friend bool operator==(const Consumed&, const Consumed&) = default;
};

// The end of a path on one side: the bytes that arrived (receiver) or left (sender), and
// the checksum this side's GPU computed over them (destination or source); `failed` is
// empty, or why the transfer failed on this side (its bytes then say how far it got).
struct Outcome {
    Path path = Path::P2p;
    std::uint64_t bytes = 0;
    std::uint64_t checksum = 0;
    std::string failed;
    friend bool operator==(const Outcome&, const Outcome&) = default;
};

// The sender of this gave up; `message` says why.
struct Failure {
    std::string message;
    friend bool operator==(const Failure&, const Failure&) = default;
};

using Message = std::variant<Hello, QueuePair, PathOpen, Ready, Staged, Consumed, Outcome, Failure>;

// The message's "type" on the wire: "hello", "queue_pair", "path", "ready", "staged",
// "consumed", "outcome", "error".
const char* type_name(const Message& message);
template <class T>
const char* type_name() {
    return type_name(Message{T{}});
}

std::string_view to_string(Role role);
std::string_view to_string(Path path);
std::string_view to_string(Choice choice);
std::string_view to_string(Mode mode);

// "" where the jobs agree, else each differing field with both values, for a Failure:
// "size 1048576 here, 2097152 there; mode send here, read there".
std::string differences(const Job& here, const Job& there);

}  // namespace rig::bootstrap
