// cable.hpp: the inside of every cable (cable.hpp, wire.hpp, datagram.hpp): the two ends,
// the frame buffers both share, the capture, and the one path every frame takes.
// Private to rig_bnxt_sim.
//
// The path of a frame: a port's step ends in Nic::Impl::flush, which hands the frames of
// the step to Link::carry(from = its end). carry is the one place every frame of every
// cable passes, whichever end sent it (for a DatagramCable the socket is end 1, and its
// receive thread calls carry(1) with what arrived): the capture writes it there, and
// there faults a cable injects are to be applied. carry then gives the frames to
// forward(to = the other end), which each kind of cable implements: into the peer
// port's inbox, which Nic::Impl::deliver fills (the one place frames arrive at a port),
// or out of a socket.
//
// Locks: `mutex` guards `ends`, `pool` and, with `resumed`, the pause of Wire's flow
// control. Order (impl.hpp): a Nic's link_mutex (released before), then `mutex`, then a
// port's inbox_mutex. The capture has a lock of its own, taken with none of these held
// or after them.
#pragma once

#include <array>
#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "packet.hpp"
#include "rig/bnxt/sim/cable.hpp"
#include "rig/result.hpp"

struct pcap;
struct pcap_dumper;

namespace rig::bnxt::sim {

namespace detail {

// A pcap file (libpcap's savefile format) that frames are appended to, each with the
// real-time clock's nanoseconds, kept non-decreasing. Thread-safe.
class Capture {
public:
    Capture() = default;
    Capture(const Capture&) = delete;
    Capture& operator=(const Capture&) = delete;
    ~Capture();

    rig::Result<void> open(const std::filesystem::path& path);
    void close();
    // Whether a file is open (relaxed: a frame racing open or close may miss it).
    bool on() const { return on_.load(std::memory_order_relaxed); }
    void write(std::span<const Frame> frames);

private:
    void close_locked();
    std::mutex mutex_;
    pcap* dead_ = nullptr;
    pcap_dumper* dumper_ = nullptr;
    std::atomic<bool> on_{false};
    std::int64_t last_ns_ = 0;
};

}  // namespace detail

struct Cable::Link : std::enable_shared_from_this<Cable::Link> {
    Link() = default;
    Link(const Link&) = delete;
    Link& operator=(const Link&) = delete;
    virtual ~Link() = default;

    // Frames `from` end's sender hands to the cable, in order: captured, then forwarded to
    // the other end. The frames forward took leave `frames`; what stays (sent out of a
    // socket, or dropped) is the caller's to reuse. Returns how many were dropped because
    // the far end is unplugged.
    std::size_t carry(unsigned from, std::vector<detail::Frame>& frames);

    // Plugs `nics[i]` into end i (nullptr: an end with no port). Throws
    // std::invalid_argument if one is plugged into a live cable.
    void plug(std::array<Nic::Impl*, 2> nics);
    void unplug();
    // Moves up to `most` spare buffers into `to`; and back, up to `keep_most` in the pool.
    void take_spares(std::vector<detail::Frame>& to, std::size_t most);
    void give_spares(std::vector<detail::Frame>& from, std::size_t keep, std::size_t pool_most);
    // Commits `count` buffers of the longest frame into the pool, as a port's packet
    // buffers are there from power-on.
    void commit_pool(std::size_t count);

    std::mutex mutex;
    std::array<Nic::Impl*, 2> ends{};
    std::vector<detail::Frame> pool;  // spare frame buffers of both ends
    std::condition_variable resumed;  // with `mutex`: an end's wire backlog fell to resume_at
    detail::Capture capture;

protected:
    // The frames to end `to`: those it takes leave `frames`. Returns how many were
    // dropped because `to` is unplugged (they stay in `frames`).
    virtual std::size_t forward(unsigned to, std::vector<detail::Frame>& frames) = 0;
    // Into the port at end `to` under `mutex`: all, or none where it is unplugged (then
    // returns frames.size()). Sets the sender's peer_full where the sender is a port.
    std::size_t deliver_to(unsigned to, std::vector<detail::Frame>& frames);
};

}  // namespace rig::bnxt::sim
