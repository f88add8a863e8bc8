// A port's side of its cable (impl.hpp, cable.hpp): the frame buffers it builds frames in,
// flush, the one place frames leave it, deliver, the one place they arrive, and the pause
// of flow control while its peer's receive backlog is full.
#include <algorithm>
#include <chrono>
#include <iterator>

#include "impl.hpp"

namespace rig::bnxt::sim {

using detail::Event;

namespace {

// Spare frame buffers: a Model keeps up to spare_most and takes spare_batch at a time from
// its cable's pool, which keeps up to pool_most: as many as 16 reads of 1 MiB put on the
// wire at once (4096 frames of 4 KiB), so that a steady transfer allocates nothing.
constexpr std::size_t spare_batch = 256;
constexpr std::size_t spare_most = 1024;
constexpr std::size_t pool_most = 8192;

// Pause flow control (IEEE 802.1Qbb PFC, which RoCE's lossless fabrics run): a port whose
// receive buffer holds pause_at frames from the wire makes its peer stop sending until it
// has worked down to resume_at. Only the worker threads pause; frames and their order are
// the same either way.
constexpr std::uint32_t pause_at = 512;
constexpr std::uint32_t resume_at = 256;
constexpr auto pause_most = std::chrono::milliseconds(1);

// An event that makes more frames than this (a long read's responses) sends them as it
// goes, so that the peer takes the first while the rest are built: its transport timer
// sees progress, as it would on a wire.
constexpr std::size_t outbox_most = 64;

}  // namespace

std::shared_ptr<Cable::Link> Model::Impl::plugged(unsigned& end) {
    std::lock_guard lock(link_mutex);
    end = link_end;
    return link.lock();
}

detail::Frame Model::Impl::frame() {
    if (spare.empty()) {
        unsigned end = 0;
        if (auto l = plugged(end)) l->take_spares(spare, spare_batch);
    }
    if (spare.empty()) {
        ++counters.frame_buffers_made;
        return {};
    }
    detail::Frame f = std::move(spare.back());
    spare.pop_back();
    f.clear();
    return f;
}

void Model::Impl::recycle(detail::Frame frame) {
    if (frame.capacity() == 0) return;
    spare.push_back(std::move(frame));
    if (spare.size() < spare_most) return;
    // The peer may be the one that builds the frames this Model takes: half to the pool.
    unsigned end = 0;
    if (auto l = plugged(end)) l->give_spares(spare, spare_most / 2, pool_most);
    spare.resize(std::min(spare.size(), spare_most / 2));
}

void Model::Impl::send(detail::Frame frame, To to) {
    if (to == To::self) {
        outbox_self.push_back(std::move(frame));
    } else if (faults.take_frame_drop()) {
        ++counters.frames_dropped;
        recycle(std::move(frame));
        return;
    } else {
        outbox_wire.push_back(std::move(frame));
    }
    if (outbox_self.size() + outbox_wire.size() >= outbox_most) flush();
}

std::uint32_t Model::Impl::deliver(std::vector<detail::Frame>& frames, std::uint64_t from) {
    const auto n = static_cast<std::uint32_t>(frames.size());
    const std::uint32_t backlog = from == Event::from_wire ? wire_backlog.fetch_add(n) + n : 0;
    {
        std::lock_guard lock(inbox_mutex);
        for (detail::Frame& f : frames) inbox.push_back(Event{Event::Kind::frame, from, {}, std::move(f)});
        counters.frames_received += n;
        arrivals.fetch_add(n, std::memory_order_relaxed);
    }
    // Woken after the inbox's lock is let go, so the worker does not wake only to wait
    // for that lock.
    inbox_cv.notify_all();
    frames.clear();
    return backlog;
}

void Model::Impl::flush() {
    if (!outbox_self.empty()) deliver(outbox_self, 0);
    if (outbox_wire.empty()) return;
    const std::size_t n = outbox_wire.size();
    std::size_t dropped = n;  // unplugged
    unsigned end = 0;
    if (auto l = plugged(end)) dropped = l->carry(end, outbox_wire);
    counters.frames_sent += n - dropped;
    counters.frames_dropped += dropped;
    for (detail::Frame& f : outbox_wire) recycle(std::move(f));  // what the cable left
    outbox_wire.clear();
}

void Model::Impl::drained(std::uint32_t frames) {
    const std::uint32_t before = wire_backlog.fetch_sub(frames);
    if (before < resume_at || before - frames >= resume_at) return;
    // Down to resume_at: a peer that paused may go on (under the cable's mutex, which its
    // wait holds while it looks at the backlog, so the wakeup is not lost).
    unsigned end = 0;
    if (auto l = plugged(end)) {
        std::lock_guard lock(l->mutex);
        l->resumed.notify_all();
    }
}

void Model::Impl::pace() {
    if (!peer_full) return;
    peer_full = false;
    unsigned end = 0;
    auto l = plugged(end);
    if (!l) return;
    std::unique_lock lock(l->mutex);
    // A peer stepped by hand drains only when stepped, and two ports each holding the
    // other's frames must not both wait: neither pauses then. The wait is bounded too. A
    // cable whose far end is no port (a socket) never pauses.
    auto go_on = [&] {
        const Impl* peer = l->ends[1 - end];
        return !peer || !peer->worker_running || peer->wire_backlog < resume_at || wire_backlog >= pause_at;
    };
    l->resumed.wait_for(lock, pause_most, go_on);
}

bool Model::Impl::pause_peer(std::uint32_t backlog) { return backlog >= pause_at; }

}  // namespace rig::bnxt::sim
