// rig/bnxt/cq.hpp: completion queues (docs/hsi.md §4.6.6, §5.5, §5.6, §5.8).
//
// A Cq is a ring of 32-byte CQEs in DMA memory the NIC writes. A CQE is new when its
// toggle bit equals the phase the driver expects, which starts at 1 and flips each time
// the consumer index wraps (§5.5.4); the toggle is read with acquire ordering before the
// rest of the entry. After a batch the driver rings a CQ doorbell with the consumer
// index and its epoch, the wrap count mod 2 (§5.8.2: the inverse of the expected phase,
// docs/bugs.md B21).
//
// A requester CQE completes every send-queue entry up to its index (§5.5.1): poll reports
// each signalled one, the last with the CQE's status. A responder CQE completes the
// oldest receive (§5.5.2). Once a queue pair fails, poll reports every entry it still
// had, sends and receives, with Status::Flushed after the failing one, in posting order;
// the NIC's own CQEs for it after that are dropped (§5.5.3).
//
// A CQE is the device's input and is checked against what was posted: one whose indexes,
// status or type no queue of the Cq can have produced (a requester sq_cons_idx beyond the
// work requests posted, a responder CQE with no receive outstanding, ...) is not reported
// as a completion: it is a device error. The Cq then reads no further CQE, its queue pairs
// fail (their entries are reported Flushed), and error() and wait() give the Error,
// naming the CQE.
//
// Thread safety: poll and wait take no lock. One thread at a time may poll or wait on a
// Cq; queue pairs may post from other threads meanwhile (qp.hpp), and may be created and
// destroyed meanwhile: a destroy returns once no poll holds the queue pair, and from
// then on no completion of it is reported (the flushes it had not reported and its CQEs
// still in the ring are dropped).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "rig/bnxt/nic.hpp"
#include "rig/result.hpp"

namespace rig::bnxt {

// What the completed work request was.
enum class Op : std::uint8_t {
    Send,  // Qp::post of a Send
    Read,  // Qp::post of a Read
    Recv,  // Qp::post of a Recv
};
std::string_view to_string(Op op);

// Which completions wake a Cq::wait on the interrupt (§5.8.1: CQ_ARMALL, CQ_ARMSE).
enum class Notify : std::uint8_t { Any, Solicited };

// The CQE status codes of §5.5.1 (requester) and §5.5.2 (responder), in one enum.
enum class Status : std::uint8_t {
    Ok,
    BadResponse,             // requester BAD_RESPONSE_ERR
    LocalLength,             // LOCAL_LENGTH_ERR: a receive shorter than the message
    LocalQpOperation,        // LOCAL_QP_OPERATION_ERR
    LocalProtection,         // LOCAL_PROTECTION_ERR: a local key, range or right
    LocalAccess,             // responder LOCAL_ACCESS_ERROR
    MemoryManagement,        // MEMORY_MGT_OPERATION_ERR
    RemoteInvalidRequest,    // REMOTE_INVALID_REQUEST_ERR
    RemoteAccess,            // requester REMOTE_ACCESS_ERR: the peer's key, range or right
    RemoteOperation,         // requester REMOTE_OPERATION_ERR
    RnrRetryExceeded,        // requester RNR_NAK_RETRY_CNT_ERR: no receive posted at the peer
    TransportRetryExceeded,  // requester TRANSPORT_RETRY_CNT_ERR
    Flushed,                 // WORK_REQUEST_FLUSHED_ERR: the queue pair had failed
    HardwareFlush,           // responder HW_FLUSH_ERR
    Unknown,                 // a code neither table lists
};
// The spec's word for it: "OK", "REMOTE_ACCESS_ERR", "WORK_REQUEST_FLUSHED_ERR".
std::string_view to_string(Status status);

// One completed work request. A plain value: no allocation.
struct Completion {
    std::uint64_t id = 0;  // the caller's id of the work request
    Op op = Op::Send;
    Status status = Status::Ok;
    std::uint8_t code = 0;                   // the CQE's status byte as the NIC wrote it (0 for a driver flush)
    std::uint32_t bytes = 0;                 // Send, Read: the bytes posted; Recv: the bytes received
    std::optional<std::uint32_t> immediate;  // Recv of a send with immediate data
    std::uint32_t qpn = 0;                   // the queue pair it belongs to
    bool ok() const { return status == Status::Ok; }
};

class Cq {
public:
    // A completion queue of at least `depth` completions on `nic` (CREATE_CQ, then a
    // CQ_ARMENA doorbell, §7.2). Error naming the NIC and size where there is no memory,
    // or the command and status where the firmware refuses. Throws std::invalid_argument
    // if depth is 0 or above Limits::max_cqe, or the NIC is closed.
    static Result<Cq> create(const Nic& nic, std::uint32_t depth);

    Cq(Cq&&) noexcept;
    Cq& operator=(Cq&&) noexcept;
    Cq(const Cq&) = delete;
    Cq& operator=(const Cq&) = delete;
    ~Cq();  // destroy(), its error lost

    // Takes up to out.size() completions without blocking, oldest first; how many. No
    // allocation, no lock, no string. Throws std::invalid_argument if the Cq was
    // destroyed or its NIC closed.
    std::size_t poll(std::span<Completion> out);
    // As poll, but waits up to `timeout` for the first completion: on the notification
    // queue's MSI-X interrupt where the NIC has one (CQ_ARMALL, NQ_ARM, §5.6), else by
    // polling against the NIC's clock. 0 when the timeout passed. Error naming the NIC
    // where it can no longer be reached, or the CQ and the CQE where the NIC wrote an
    // invalid one (error()) and nothing is left to report. (A queue pair the firmware alone declares failed
    // (§4.5.4), with no CQE, does not wake a wait on the interrupt; the next poll or wait
    // reports its flushed entries.)
    // Notify::Solicited arms for the next receive of a send with Solicit::Yes or the next
    // error (CQ_ARMSE, §5.8.1) only: other completions are taken when the wait looks (at
    // its start, after a wakeup, at its timeout), but do not wake it. Without interrupts
    // the wait polls and takes any completion.
    Result<std::size_t> wait(std::span<Completion> out, std::chrono::nanoseconds timeout, Notify notify = Notify::Any);

    // DESTROY_CQ, then drains the notification queue of the CQ's notifications (§7.4),
    // then frees the ring. Error naming the command and status where the firmware
    // refuses (as while a Qp still uses the Cq: destroy the Qp first). Ok and nothing done
    // once destroyed or after the NIC closed.
    Result<void> destroy();

    std::uint32_t depth() const;  // completions it holds
    std::uint32_t id() const;     // the firmware's CQ id
    // Once the NIC wrote a CQE that fails the checks above: "<bus>: CQ <id>: the NIC wrote
    // an invalid CQE at index <i> (<why>): <its 32 bytes in hex>; ...". nullopt before.
    // May be called from any thread.
    std::optional<std::string> error() const;

    struct State;  // the driver's, behind the handle

private:
    friend struct Handles;  // the driver's way to the state (nic/bnxt/src/state.hpp)
    explicit Cq(std::shared_ptr<State> state);
    std::shared_ptr<State> state_;
};

}  // namespace rig::bnxt
