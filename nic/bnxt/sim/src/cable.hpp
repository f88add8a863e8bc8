// cable.hpp: the inside of every cable (cable.hpp, wire.hpp, datagram.hpp): the two ends,
// the frame buffers both share, the capture, and the one path every frame takes.
// Private to rig_bnxt_sim.
//
// The path of a frame: a port's step ends in Model::Impl::flush, which hands the frames of
// the step to Link::carry(from = its end). carry is the one place every frame of every
// cable passes, whichever end sent it (for a DatagramCable the socket is end 1, and its
// receive thread calls carry(1) with what arrived): the capture writes it there, and
// there the cable's faults (Cable::inject, hold) act on it. carry then gives the frames to
// forward(to = the other end), which each kind of cable implements: into the peer
// port's inbox, which Model::Impl::deliver fills (the one place frames arrive at a port),
// or out of a socket.
//
// Locks: `mutex` guards `ends`, `pool` and, with `resumed`, the pause of Wire's flow
// control. Order (impl.hpp): a Model's link_mutex (released before), then a direction's
// FaultPath::mutex (held while its frames are forwarded, so that what it lets out keeps
// its order), then `mutex`, then a port's inbox_mutex. The capture has a lock of its
// own, taken with none of these held or after them.
#pragma once

#include <array>
#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <memory>
#include <mutex>
#include <random>
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

// The faults of one direction of a cable (Cable::Faults) and what they did. Its sender's
// frames pass apply one batch at a time, under `mutex`.
class FaultPath {
public:
    // Whether a batch must pass apply: faults set or the cable held (relaxed: a batch racing inject may miss it, as a capture may).
    bool active() const { return active_.load(std::memory_order_relaxed); }
    // Every batch, through apply or not (one relaxed add).
    void count(std::size_t frames) { carried_.fetch_add(frames, std::memory_order_relaxed); }
    void set(const Cable::Faults& faults);
    void hold(bool on);
    // Moves the frames of `in` that come out, in the order they come out, to the end of
    // `out` (duplicates copied); what is lost stays in `in`, which is left holding only those.
    void apply(std::vector<Frame>& in, std::vector<Frame>& out);
    Cable::FaultCounters counters() const;
    void reset_counters();

    mutable std::mutex mutex;
    std::vector<Frame> out;  // apply's output, forwarded under `mutex`

private:
    bool chance(double p);
    void emit(Frame frame, bool twice, std::vector<Frame>& out);
    void update_active();

    struct Waiting {
        Frame frame;
        unsigned frames_left;  // later frames to let pass first
        bool twice;
        bool overtaken;  // a later frame passed it (counted as reordered)
    };
    Cable::Faults faults_{};
    bool hold_ = false;
    std::mt19937_64 random_{1};
    std::vector<Waiting> waiting_;
    Cable::FaultCounters counters_{};
    std::atomic<bool> active_{false};
    std::atomic<std::uint64_t> carried_{0};
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
    void plug(std::array<Model::Impl*, 2> nics);
    void unplug();
    // Moves up to `most` spare buffers into `to`; and back, up to `keep_most` in the pool.
    void take_spares(std::vector<detail::Frame>& to, std::size_t most);
    void give_spares(std::vector<detail::Frame>& from, std::size_t keep, std::size_t pool_most);
    // Commits `count` buffers of the longest frame into the pool, as a port's packet
    // buffers are there from power-on.
    void commit_pool(std::size_t count);

    std::mutex mutex;
    std::array<Model::Impl*, 2> ends{};
    std::vector<detail::Frame> pool;  // spare frame buffers of both ends
    std::condition_variable resumed;  // with `mutex`: an end's wire backlog fell to resume_at
    detail::Capture capture;
    std::array<detail::FaultPath, 2> faults;  // [from]: the frames end `from` sends

protected:
    // The frames to end `to`: those it takes leave `frames`. Returns how many were
    // dropped because `to` is unplugged (they stay in `frames`).
    virtual std::size_t forward(unsigned to, std::vector<detail::Frame>& frames) = 0;
    // Into the port at end `to` under `mutex`: all, or none where it is unplugged (then
    // returns frames.size()). Sets the sender's peer_full where the sender is a port.
    std::size_t deliver_to(unsigned to, std::vector<detail::Frame>& frames);
};

}  // namespace rig::bnxt::sim
