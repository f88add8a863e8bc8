// impl.hpp: what a Model is made of (nic.hpp): the BAR0 register file and the inbox that
// BAR writes and wire frames fill, the step that empties it into the Firmware, the
// worker thread, and the cable it is plugged into. Private to rig_bnxt_sim.
//
// Frames (port.cpp): the Firmware builds each frame in a spare buffer and sends it into
// the outbox; when the event that made them is done (or 64 are waiting), flush hands the
// outbox to the cable (Cable::Link::carry, cable.hpp) or puts it into this Model's own
// inbox, at once, in order. Frames arrive at a port only through deliver, under one lock
// and with one wakeup. A receiver gives the buffers of frames it has taken back to
// spares; spares beyond what a Model keeps go to the cable's pool, and a Model without spares
// takes from it, a batch at a time.
//
// Locks: `inbox_mutex` guards the inbox, the register file and the BAR-side counters
// (bar_width_faults, bar_unmapped, frames_received); `step_mutex` guards the Firmware,
// the outbox, the spares, `rx` and every other counter (resolve sends its requests under
// it, as a step sends; `neighbours` locks itself); `link_mutex` guards which link the Model
// is plugged into. Orders: a step takes step_mutex, then inbox_mutex briefly; a BAR
// access takes inbox_mutex only; frames leaving take link_mutex (released), then the
// cable's mutex, then the peer's inbox_mutex; plugging takes the link_mutexes, then the
// cable's mutex.
#pragma once

#include <array>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "cable.hpp"
#include "firmware.hpp"

namespace rig::bnxt::sim {

struct Model::Impl final : detail::Transmitter {
    explicit Impl(ModelOptions o);

    // detail::Transmitter, inside a step.
    detail::Frame frame() override;
    void send(detail::Frame frame, To to) override;

    bool step();  // one event (or a due timer), with its frames sent
    void run();
    // The worker, out of work: whether an event arrived (arrivals moved past `seen`) within
    // the spin it allows itself before it sleeps on inbox_cv.
    bool arrives(std::uint64_t seen) const;
    void post(detail::Event event);  // with inbox_mutex held
    // Inside a step: the event's effects, then its frames out and its buffer back. true
    // where it was a frame from the wire (for drained).
    bool handle(detail::Event& event);
    // After the events of a step (handled: there were some) or none: fires the due
    // timers where there were none, and records whether timers wait; whether it worked.
    bool end_step(bool handled);
    void flush();
    // The one place frames arrive at this port: puts `frames` into the inbox as frame
    // events of origin `from` (Event::value), counted, and wakes the worker; leaves
    // `frames` empty. Returns the wire backlog after (frames from a cable count in it).
    std::uint32_t deliver(std::vector<detail::Frame>& frames, std::uint64_t from);
    void recycle(detail::Frame frame);
    // The cable this Model is plugged into (nullptr: none, or it is gone) and its end.
    std::shared_ptr<Cable::Link> plugged(unsigned& end);
    // The worker's pause while the peer's backlog is full (pause flow control, port.cpp);
    // whether a port with `backlog` frames from its cable makes its peer pause.
    void pace();
    static bool pause_peer(std::uint32_t backlog);
    void drained(std::uint32_t frames);  // frames from the wire were handled
    // Model::resolve: sends the request (under step_mutex, as a step sends) and waits.
    rig::Result<detail::Mac> resolve(const detail::Gid& gid, std::chrono::milliseconds timeout);

    ModelOptions options;
    SteadyClock steady;
    const ModelClock& clock;
    testing::Counters counters;
    RxCounters rx;  // step_mutex, as counters
    detail::FaultPlan faults;
    detail::Neighbours neighbours;

    std::mutex inbox_mutex;
    std::condition_variable inbox_cv;
    std::deque<detail::Event> inbox;
    // Events put into the inbox so far: the worker watches it, without the lock, while it
    // spins before it sleeps (run).
    std::atomic<std::uint64_t> arrivals{0};
    bool stop_requested = false;
    bool timers_pending = false;
    std::array<std::uint32_t, 64> window{};  // BAR0 0x000..0x0FF
    std::array<std::uint32_t, 4> mailbox{};  // BAR0 0x600..0x60F
    bool mailbox_dirty = false;
    std::uint32_t cmdq_prod = 0;  // BAR0 0x60C after the latch

    // Frames from the wire delivered into the inbox and not yet handled (the receive
    // buffer that pause flow control watches); whether the worker thread runs.
    alignas(64) std::atomic<std::uint32_t> wire_backlog{0};  // its own cache line: both ends write it
    std::atomic<bool> worker_running{false};

    std::mutex step_mutex;
    bool peer_full = false;  // the last frames out found the peer's backlog at pause_at
    std::vector<detail::Frame> outbox_wire;
    std::vector<detail::Frame> outbox_self;
    std::vector<detail::Frame> spare;
    detail::Firmware firmware;
    rig::sim::Port* port = nullptr;
    std::thread worker;

    std::mutex link_mutex;
    std::weak_ptr<Cable::Link> link;  // the cable owns its Link: destroying it unplugs
    unsigned link_end = 0;
};

}  // namespace rig::bnxt::sim
