// nic/bnxt/src/state.hpp: what a Nic, Region, Cq and Qp hold, shared by the driver's
// sources. The public handles own these through shared_ptr; the Nic's registries point
// at the live ones so that close() can tear them down (§7.4).
//
// Who owns what, per thread:
//  - Nic::State::mutex: the firmware channels, the registries, every create/destroy.
//  - A Qp's poster (one thread): sq_prod, rq_prod, the shadow entries it publishes, and
//    the posted counts it stores with release ordering.
//  - A Cq's poller (one thread): its consumer position and carry, and, of each Qp whose
//    queue completes on it, that queue's retired count (stored with release ordering, so
//    the poster sees room) and done_until; the device error it found.
//  - A Cq's list of queue pairs: the control path (under Nic::State::mutex) replaces it
//    whole and frees the old list, and lets a Qp go, only once no poll that may hold them
//    is running (QpList, Cq::State::set_qps); the poller reads it without a lock.
//  - failed (atomic): set once by a poller or the channel; never cleared.
#pragma once

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "dma_buffer.hpp"
#include "hwrm.hpp"
#include "rcfw.hpp"
#include "rig/bnxt/cq.hpp"
#include "rig/bnxt/detail/ring.hpp"
#include "rig/bnxt/hsi/cqe.hpp"
#include "rig/bnxt/hsi/wqe.hpp"
#include "rig/bnxt/nic.hpp"
#include "rig/bnxt/qp.hpp"
#include "rig/bnxt/region.hpp"
#include "rig/pci/claim.hpp"

namespace rig::bnxt {

// The notification queue (§5.6) and the waiters on its MSI-X vector. One thread at a
// time waits on the vector (the leader); the others wait on `cv` for its news.
struct Nq {
    QueueMemory ring;
    std::uint32_t entries = 0;
    std::uint16_t ring_id = hsi::ring_id_invalid;
    unsigned vector = 0;
    std::mutex mutex;
    std::condition_variable cv;
    bool leader = false;
    detail::RingPosition cons{1};
    struct Count {
        std::uint32_t cq_id = 0;
        std::uint64_t notifications = 0;
    };
    std::unordered_map<std::uint64_t, Count> counts;  // by cq_handle
};

struct Nic::State {
    State(pci::Function function, Options opts);
    std::string bus;
    pci::Function fn;
    Options options;
    std::shared_ptr<Clock> clock;
    pci::Window bar0;
    pci::Window doorbells;  // the privileged doorbell page (§1.4)

    std::mutex mutex;  // the channels, the registries, open and close
    std::optional<Hwrm> hwrm;
    std::optional<Rcfw> rcfw;

    // What bring-up set up, so that teardown undoes exactly that (§7.4).
    bool registered = false;  // FUNC_DRV_RGTR
    std::vector<DmaBuffer> backing_store;
    QueueMemory creq_memory;  // until the channel takes it
    std::uint16_t creq_ring_id = hsi::ring_id_invalid;
    std::optional<std::uint32_t> stat_ctx_id;
    DmaBuffer stats;
    bool fw_initialized = false;  // INITIALIZE_FW
    Nq nq;
    // The port's GID table (Options::gids, address_gids or default_gids), the entry chosen
    // at open, and the firmware's index of each entry (ADD_GID at open; entries of one
    // address share one).
    std::vector<GidEntry> gids;
    std::size_t gid_chosen = 0;
    std::vector<std::uint16_t> gid_firmware;
    std::optional<std::uint16_t> gid_index;  // the chosen GID's
    std::vector<std::uint16_t> added_gids;   // every ADD_GID's index, in order

    Limits limits;
    bool hw_retransmission = false;  // QUERY_FUNC HW_REQUESTER_RETX_ENABLED
    Mac mac{};
    Gid gid{};
    Mtu mtu = Mtu::Mtu1024;
    std::string firmware;
    bool interrupts = false;
    std::atomic<bool> closed{false};

    // Memory the NIC may still reach after a refused deregister or destroy: kept until
    // the release at close turns bus mastering off (docs/api.md, "deregister").
    std::vector<DmaBuffer> kept;
    std::vector<pci::Claim> kept_claims;  // the claims of regions whose deregister was refused

    std::vector<Region::State*> regions;
    std::vector<Cq::State*> cqs;
    std::vector<Qp::State*> qps;
    std::uint64_t next_handle = 1;  // cq_handle, qp_handle: never reused
    std::uint32_t pd_id = 1;        // one protection domain (§7.2 step 1)

    // The first error of a teardown step, and the rest attempted.
    void teardown(std::optional<std::string>& first_error);
    Qp::State* find_qp(std::uint32_t qpn) const;
    ~State();
};

struct Region::State {
    std::shared_ptr<Nic::State> nic;
    RegionKind kind = RegionKind::Host;
    std::uint64_t bytes = 0;
    std::uint64_t va = 0;
    std::uint32_t key = 0;
    DmaBuffer memory;              // Host
    pci::Window view;              // Host: the memory read and write reach, kept where memory goes to Nic::kept
    const void* pinned = nullptr;  // Pages
    std::uint64_t pinned_bytes = 0;
    std::vector<pci::Run> peers;  // Device: what map_peer mapped into the NIC's IOMMU domain
    // Pages, Device: the memory it covers, claimed against its owner's free (B18): the
    // process's bytes (Pages) or the runs' bus addresses on the NIC's machine (Device).
    pci::Claim claim;
    PageList pages;
    // Deregistered until REGISTER_MR succeeds; Stuck once DEREGISTER_MR was refused.
    enum class Life : std::uint8_t { Registered, Deregistered, Stuck } life = Life::Deregistered;
    std::atomic<bool> usable{true};  // Registered and the NIC open: posts and read/write may use it

    // DEREGISTER_MR, DEALLOCATE_KEY, then the memory back. Under the NIC's mutex.
    Result<void> deregister_locked();
    ~State();
};

// What retire does with an object's DMA memory.
enum class Memory : std::uint8_t { Free, KeepUntilClose };

struct SendEntry {
    std::uint64_t id = 0;
    std::uint32_t bytes = 0;
    Op op = Op::Send;
    bool signalled = true;
};
struct RecvEntry {
    std::uint64_t id = 0;
    std::uint32_t bytes = 0;
};

// The queue pairs completing on a Cq, as one immutable list.
struct QpList {
    std::vector<Qp::State*> qps;
};

// Why a CQE the NIC wrote was refused (poll.cpp): a string literal, so that the hot path
// builds nothing.
struct BadCqe {
    std::array<std::byte, hsi::cqe::bytes> bytes{};
    std::uint32_t index = 0;  // its ring index
    const char* why = "";
};

struct Cq::State {
    std::shared_ptr<Nic::State> nic;
    std::uint32_t id = 0;
    std::uint32_t depth = 0;  // completions the caller asked room for
    std::uint32_t size = 0;   // CQEs in the ring: depth + 1
    std::uint64_t handle = 0;
    QueueMemory ring;
    pci::Window entries;
    pci::Window doorbells;
    detail::RingPosition cons{1};
    // The queue pairs completing here: `qps` the control path's copy (under the mutex),
    // `published` the list pollers read. poll_seq is odd while a poll runs.
    std::unique_ptr<QpList> qps = std::make_unique<QpList>();
    std::atomic<const QpList*> published{qps.get()};
    std::atomic<std::uint64_t> poll_seq{0};
    std::uint32_t reserved = 0;  // their depths together
    Qp::State* carry = nullptr;  // a requester CQE not yet wholly reported (the poller's)
    std::atomic<bool> flush_pending{false};
    std::atomic<bool> live{false};  // from the firmware's CREATE on; a refused create leaves it false
    // A CQE that failed the checks of poll.cpp: the device is in error and so are the
    // Cq's queue pairs (written by the poller before `device_error`, release).
    BadCqe bad;
    std::atomic<bool> device_error{false};

    // Under the mutex: makes `qps` the list and returns once no poll holds the old one
    // (a poll that runs meanwhile sees the new one), then frees it.
    void set_qps(std::vector<Qp::State*> qps);
    Result<void> destroy_locked();
    // Out of use and out of the registries; its memory freed, or kept until close where
    // the NIC may still reach it. Under the mutex.
    void retire(Memory memory);
    ~State();
};

struct Qp::State {
    std::shared_ptr<Nic::State> nic;
    std::shared_ptr<Cq::State> send_cq;
    std::shared_ptr<Cq::State> recv_cq;
    std::uint64_t handle = 0;
    std::uint32_t qpn = 0;
    Depths depths;
    std::uint32_t sq_size = 0;  // WQEs in the ring: depth + 1
    std::uint32_t rq_size = 0;
    QueueMemory sq;
    QueueMemory rq;
    DmaBuffer orrq_irrq;
    pci::Window sq_ring;
    pci::Window rq_ring;
    pci::Window doorbells;
    Endpoint local;
    std::uint8_t initiator_depth = 1;
    std::uint8_t responder_depth = 1;
    std::uint32_t max_inline = 0;
    std::atomic<QpState> state{QpState::Reset};
    std::atomic<bool> live{false};  // from the firmware's CREATE on; a refused create leaves it false

    // The poster's.
    detail::RingPosition sq_prod{1};
    detail::RingPosition rq_prod{1};
    std::uint32_t next_psn = 0;
    std::uint32_t mtu_bytes = 1024;
    std::optional<Mtu> path_mtu;        // set at RTR
    bool rq_doorbell_deferred = false;  // receives posted before RTR
    std::uint64_t sq_count = 0;         // the poster's copies of the posted counts
    std::uint64_t rq_count = 0;
    std::vector<SendEntry> sq_shadow;
    std::vector<RecvEntry> rq_shadow;
    std::atomic<std::uint64_t> sq_posted{0};
    std::atomic<std::uint64_t> rq_posted{0};

    // The pollers'.
    std::atomic<std::uint64_t> sq_retired{0};
    std::atomic<std::uint64_t> rq_retired{0};
    std::uint64_t sq_done_until = 0;
    Status sq_status = Status::Ok;  // of the WQE before sq_done_until
    std::uint8_t sq_code = 0;
    bool sq_fail_after = false;         // a TERMINAL CQE: fail once done_until is reported
    std::atomic<bool> failed{false};    // Error: every outstanding entry is flushed
    std::atomic<bool> notified{false};  // the firmware said Error (§4.5.4)

    // Both Cqs learn that this Qp flushes.
    void fail();
    Result<void> destroy_locked();
    void retire(Memory memory);
    ~State();
};

// The driver's way from a handle to its state: the handles keep their state private
// (pimpl) and befriend this, so that no public accessor hands the internals out.
struct Handles {
    static const std::shared_ptr<Nic::State>& of(const Nic& nic) { return nic.state_; }
    static const std::shared_ptr<Region::State>& of(const Region& region) { return region.state_; }
    static const std::shared_ptr<Cq::State>& of(const Cq& cq) { return cq.state_; }
    static const std::shared_ptr<Qp::State>& of(const Qp& qp) { return qp.state_; }
};

// Status of a requester or responder CQE status byte (§5.5.1, §5.5.2).
Status requester_status(std::uint8_t code);
Status responder_status(std::uint8_t code);

// The NQ helpers of nq.cpp. Under nq.mutex: takes every new NQ entry, counting CQ
// notifications and re-enabling arming of their CQs (§5.6).
void drain_nq_locked(Nic::State& nic);
// Waits until the CQ of `handle` has more than `seen` notifications or `deadline`.
void wait_nq(Nic::State& nic, std::uint64_t handle, std::uint64_t seen, std::chrono::nanoseconds deadline);

}  // namespace rig::bnxt
