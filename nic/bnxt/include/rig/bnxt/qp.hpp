// rig/bnxt/qp.hpp: reliable-connected queue pairs (docs/hsi.md §4.6.8-4.6.11, §5.1-§5.4,
// §7.2, §7.3).
//
// A Qp has a send queue and a receive queue of 128-byte static-mode WQEs in DMA memory
// (§5.1), the send queue followed by its PSN search area (§5.4). A post takes a span of
// work requests (Send, Recv or Read, below), writes the WQE (and the PSN entry) of each
// one that fits, in order, then rings the doorbell once: one 8-byte store of the producer
// index and its epoch (§5.8). It returns how many it queued, as ibv_post_send's list of
// work requests and ixy's batched transmit do: a full queue is not an error, the requests
// past the room are not queued. A post allocates nothing, builds no string and takes no
// lock.
//
// Work requests: a Send from a region (with immediate data or not) or of the caller's
// bytes (inline: copied into the WQE, at most Limits::max_inline_data), a Recv into a
// region, a Read of a connected peer's region into a local one. No RDMA WRITE is offered:
// a peer writes a region only through a receive its owner posted (docs/api.md, "Region"). Each carries
// the caller's 64-bit id, which its Completion carries; a Send or Read with Signal::No
// produces no completion when it succeeds (keep at least one signalled request per
// depth, or the queue never frees), but one when it fails. Every request of a post is
// checked against the NIC's limits (nic.hpp) and its region before any reaches the queue:
// where one is a caller's bug, the post throws and queues none of them.
//
// States: a Qp is created in RESET; connect walks RESET→INIT→RTR→RTS with the masks of
// §4.6.9. Receives may be posted before connect (the RQ doorbell rings after RTR); sends
// and reads need RTS. When a request fails, the Qp is in Error: every request still
// queued completes with Status::Flushed, and later posts are queued as flushed without
// reaching the NIC (§5.2.5).
//
// Thread safety: one thread at a time may post to a Qp; its Cqs may be polled by other
// threads meanwhile, create and destroy included (cq.hpp). connect and destroy take the
// NIC's channel lock and must not run while the Qp is posted to.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>

#include "rig/bnxt/cq.hpp"
#include "rig/bnxt/gid.hpp"
#include "rig/bnxt/nic.hpp"
#include "rig/bnxt/region.hpp"
#include "rig/result.hpp"

namespace rig::bnxt {

// What a peer needs to connect to a Qp (§7.2 step 5): a plain value for any channel.
struct Endpoint {
    std::uint32_t qpn = 0;  // 24 bits
    std::uint32_t psn = 0;  // the first PSN this Qp sends, 24 bits
    Gid gid{};
    Mac mac{};
    Mtu mtu = Mtu::Mtu1024;  // the largest path MTU of its port
    friend bool operator==(const Endpoint&, const Endpoint&) = default;
};

enum class Signal : std::uint8_t { Yes, No };
// Whether a send asks for the peer's attention (the WQE's SE flag, IBA's solicited event):
// its receive completion wakes a Cq::wait on the peer armed with Notify::Solicited.
enum class Solicit : std::uint8_t { No, Yes };

enum class QpState : std::uint8_t { Reset, Init, Rtr, Rts, Error };

// How a connected queue pair retries (§4.6.9, IB encodings).
struct Retries {
    std::uint8_t timeout = 14;   // ACK timeout: 4.096 us x 2^timeout (14: 67 ms)
    std::uint8_t retry_cnt = 7;  // retransmissions before TRANSPORT_RETRY_CNT_ERR, 0..7
    std::uint8_t rnr_retry = 7;  // receiver-not-ready retries before RNR_NAK_RETRY_CNT_ERR; 7: forever
};

// Where a queue pair's packets go and how many RDMA READs it keeps in flight (§4.6.9; the
// ah_attr.grh and rd_atomic fields of verbs' ibv_qp_attr).
struct Path {
    // The entry of Nic::gids() the queue pair speaks from (the source GID, and so the
    // source IPv4 or IPv6 address, of its packets); nullopt: the one chosen at open
    // (Nic::gid()). Any RoCEv2 entry may be named, link-local ones too; open gave the
    // firmware every entry of the table (ADD_GID).
    std::optional<std::size_t> gid_index;
    // The GRH hop limit, the IPv4 TTL or IPv6 hop limit of its packets: 1..255 (1 keeps
    // them on the link, as ibv_rc_pingpong asks; > 1 to leave the subnet, docs/bugs.md B19).
    std::uint8_t hop_limit = 64;
    // RDMA READs it has outstanding as requester (max_rd_atomic), 1..Qp::read_depths()
    // .initiator; nullopt: that most.
    std::optional<std::uint8_t> max_rd_atomic;
    // RDMA READs of the peer it answers at once (max_dest_rd_atomic),
    // 1..Qp::read_depths().responder; nullopt: that most.
    std::optional<std::uint8_t> max_dest_rd_atomic;
    // The largest path MTU it may use (ibv_qp_attr.path_mtu): below the port's where the
    // fabric between the two ports carries less, as a network of 1500-byte Ethernet frames
    // carries Mtu1024 at most (Nic::mtu's 96 bytes of headers); nullopt: no cap. The queue
    // pair uses the smallest of this, its port's (Nic::mtu()) and the peer's (Endpoint::mtu):
    // Qp::path_mtu(). Cap both ends alike: a responder drops a packet whose payload is
    // longer than its own path MTU (IBA 9.6's length checks), and the sender's retries run out.
    std::optional<Mtu> mtu;
};

// The RDMA READ depths a queue pair was created with (from QUERY_FUNC's max_qp_init_rd_atom
// and max_qp_rd_atom, at most 16 each): the most a Path may ask.
struct ReadDepths {
    std::uint8_t initiator = 1;
    std::uint8_t responder = 1;
};

// A send (§5.2.1, §5.2.4): `bytes` bytes at `offset` of `region`, or, where region is null,
// the caller's `inline_data`, copied into the WQE by the post. Designated initializers name
// what differs from the defaults:
//   qp.post(Send{.region = &r, .bytes = 64, .id = 7});
//   qp.post(Send{.id = 8, .immediate = 0xC0FFEE, .inline_data = bytes});
struct Send {
    const Region* region = nullptr;
    std::uint64_t offset = 0;  // bytes from the region's start
    std::uint64_t bytes = 0;   // below 2^31 (RoCE's message limit)
    std::uint64_t id = 0;      // the caller's, carried by the Completion
    Signal signalled = Signal::Yes;
    std::optional<std::uint32_t> immediate = std::nullopt;  // SEND_WITH_IMMEDIATE: the peer's Completion carries it
    Solicit solicited = Solicit::No;
    std::span<const std::byte> inline_data = {};  // with no region: at most Limits::max_inline_data bytes
};

// A receive (§5.3) of up to `bytes` bytes into `offset` of `region`. Its completion is
// always signalled.
struct Recv {
    const Region* region = nullptr;
    std::uint64_t offset = 0;
    std::uint64_t bytes = 0;  // below 2^31
    std::uint64_t id = 0;
};

// An RDMA READ (§5.2.2) of `bytes` bytes of the connected peer's region at `remote` into
// `offset` of the local `region`.
struct Read {
    const Region* region = nullptr;
    std::uint64_t offset = 0;
    std::uint64_t bytes = 0;  // below 2^31
    Remote remote{};          // the peer's Region::remote(offset)
    std::uint64_t id = 0;
    Signal signalled = Signal::Yes;
};

// (Every member has a default member initializer, so that a designated initializer may
// leave any out without GCC's -Wmissing-field-initializers.)

// Queue depths, in work requests.
struct Depths {
    std::uint32_t send = 128;
    std::uint32_t recv = 128;
};

class Qp {
public:
    // An RC queue pair whose sends and reads complete on `send_cq` and receives on
    // `recv_cq` (which may be the same Cq). Error naming the NIC where there is no memory
    // for its queues, or the command and status where the firmware refuses. Throws
    // std::invalid_argument if a depth is 0 or above Limits::max_qp_wr (QUERY_FUNC's
    // max_qp_wr - 1: each ring holds its depth + 1 WQEs, at most max_qp_wr), the Cqs belong
    // to another NIC or were destroyed, the depths of the Cq's queue pairs would exceed
    // its depth (a CQ that overflows stops), or the NIC is closed.
    static Result<Qp> create(const Nic& nic, Cq& send_cq, Cq& recv_cq, Depths depths = {});

    Qp(Qp&&) noexcept;
    Qp& operator=(Qp&&) noexcept;
    Qp(const Qp&) = delete;
    Qp& operator=(const Qp&) = delete;
    ~Qp();  // destroy(), its error lost

    // This side's address for the peer. Its GID is Nic::gid() until connect, then the GID
    // of the entry `path.gid_index` named.
    Endpoint endpoint() const;
    // RESET→INIT (access LOCAL_WRITE | REMOTE_READ), INIT→RTR (the peer's QPN, PSN, GID,
    // MAC, the smallest of the two ports' MTUs and path.mtu; `path`'s source GID, hop limit
    // and responder depth), RTR→RTS
    // (`retries`, `path`'s initiator depth). Error naming the command and status where
    // the firmware refuses a step (the Qp is then in the state the last accepted step
    // left), or naming the entry where path.gid_index is a RoCEv1 one or of another IP
    // family than the peer's GID (nothing is sent then). Throws std::invalid_argument
    // if the Qp is not in RESET or was destroyed, a retry count is above 7, the timeout
    // above 31, path.gid_index is not an index of Nic::gids(), the hop limit is 0, or a
    // READ depth is 0 or above read_depths().
    Result<void> connect(const Endpoint& peer, Retries retries = {}, const Path& path = {});

    // Queues the sends, in order, as many as the send queue has room for, and rings the
    // doorbell once; how many it queued (0: the queue is full, or `sends` is empty). Throws
    // std::invalid_argument, queueing none, if a send's bytes do not lie in its region,
    // bytes >= 2^31, its region is deregistered or of another NIC, it has both a region
    // and inline_data, or no region and a nonzero offset or bytes, its inline_data is
    // longer than Limits::max_inline_data; or if the Qp is not connected (RTS or Error)
    // or was destroyed.
    [[nodiscard]] std::size_t post(std::span<const Send> sends);
    // Queues the receives, as post of sends does; allowed before connect. Throws as post
    // of sends does (a receive needs a region), but for the connection.
    [[nodiscard]] std::size_t post(std::span<const Recv> recvs);
    // Queues the reads on the send queue, as post of sends does. Throws as post of sends.
    [[nodiscard]] std::size_t post(std::span<const Read> reads);
    // One request: the post of a span of one; whether it was queued.
    [[nodiscard]] bool post(const Send& send) { return post(std::span<const Send>(&send, 1)) == 1; }
    [[nodiscard]] bool post(const Recv& recv) { return post(std::span<const Recv>(&recv, 1)) == 1; }
    [[nodiscard]] bool post(const Read& read) { return post(std::span<const Read>(&read, 1)) == 1; }

    QpState state() const;
    std::uint32_t qpn() const;
    Depths depths() const;
    ReadDepths read_depths() const;
    // The path MTU the connected queue pair segments its messages by and takes packets up
    // to (INIT→RTR's path_mtu): nullopt before connect has sent RTR, or once destroyed.
    // Not to be called while connect runs.
    std::optional<Mtu> path_mtu() const;

    // DESTROY_QP and frees its queues. Any state. Once it returns no poll of its Cqs holds
    // the Qp and none reports a completion of it: what it had not reported (entries it
    // would flush, CQEs still in a ring) is dropped. Error naming the command and status
    // where the firmware refuses. Ok and nothing done once destroyed or after the NIC closed.
    Result<void> destroy();

    struct State;  // the driver's, behind the handle

private:
    friend struct Handles;  // the driver's way to the state (nic/bnxt/src/state.hpp)
    explicit Qp(std::shared_ptr<State> state);
    std::shared_ptr<State> state_;
};

}  // namespace rig::bnxt
