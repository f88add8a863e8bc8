// Every cable's inside (cable.hpp): plugging, the shared frame buffers, carry (the one
// path of every frame) and delivery into a port; the capture, a pcap savefile written
// through libpcap (pcap_open_dead_with_tstamp_precision, pcap_dump_open, pcap_dump; link
// type DLT_EN10MB, nanosecond timestamps: the savefile magic 0xA1B23C4D); the faults of
// each direction (FaultPath: loss, duplication, reordering, hold); the public Cable; and Wire (wire.hpp), the in-process cable, whose forward is delivery into the
// peer port.
#include "cable.hpp"

#include <pcap/pcap.h>
#include <time.h>

#include <algorithm>
#include <iterator>
#include <stdexcept>
#include <utility>

#include "impl.hpp"
#include "rig/bnxt/sim/wire.hpp"

namespace rig::bnxt::sim {

using detail::Event;
using detail::Frame;

namespace detail {

namespace {
// Whole frames: the longest a port takes is far below it.
constexpr int snap_bytes = 65535;
}  // namespace

Capture::~Capture() { close(); }

rig::Result<void> Capture::open(const std::filesystem::path& path) {
    pcap_t* dead = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, snap_bytes, PCAP_TSTAMP_PRECISION_NANO);
    if (dead == nullptr) return rig::fail("capture ", path.string(), ": libpcap could not make a capture handle");
    pcap_dumper_t* dumper = pcap_dump_open(dead, path.c_str());
    if (dumper == nullptr) {
        std::string why = pcap_geterr(dead);
        pcap_close(dead);
        return rig::fail("capture ", path.string(), ": ", why);
    }
    std::lock_guard lock(mutex_);
    close_locked();
    dead_ = dead;
    dumper_ = dumper;
    last_ns_ = 0;
    on_.store(true, std::memory_order_relaxed);
    return {};
}

void Capture::close() {
    std::lock_guard lock(mutex_);
    close_locked();
}

void Capture::close_locked() {
    on_.store(false, std::memory_order_relaxed);
    if (dumper_ != nullptr) pcap_dump_close(dumper_);  // flushes
    if (dead_ != nullptr) pcap_close(dead_);
    dumper_ = nullptr;
    dead_ = nullptr;
}

void Capture::write(std::span<const Frame> frames) {
    std::lock_guard lock(mutex_);
    if (dumper_ == nullptr) return;
    for (const Frame& f : frames) {
        timespec now{};
        clock_gettime(CLOCK_REALTIME, &now);
        // The real-time clock may step back (NTP); a capture's timestamps do not.
        last_ns_ = std::max(last_ns_, std::int64_t{now.tv_sec} * 1'000'000'000 + now.tv_nsec);
        pcap_pkthdr header{};
        header.ts.tv_sec = static_cast<time_t>(last_ns_ / 1'000'000'000);
        header.ts.tv_usec = static_cast<suseconds_t>(last_ns_ % 1'000'000'000);  // nanoseconds: the precision asked for
        header.caplen = static_cast<bpf_u_int32>(std::min<std::size_t>(f.size(), snap_bytes));
        header.len = static_cast<bpf_u_int32>(f.size());
        pcap_dump(reinterpret_cast<u_char*>(dumper_), &header, reinterpret_cast<const u_char*>(f.data()));
    }
}

void FaultPath::set(const Cable::Faults& faults) {
    auto probability = [](double p) { return p >= 0 && p <= 1; };  // false for NaN too
    if (!probability(faults.drop) || !probability(faults.duplicate) || !probability(faults.reorder))
        throw std::invalid_argument("bnxt cable faults: a probability outside [0, 1]");
    if (faults.reorder > 0 && faults.reorder_window < 2)
        throw std::invalid_argument("bnxt cable faults: reordering needs a reorder_window of 2 or more");
    std::lock_guard lock(mutex);
    faults_ = faults;
    random_.seed(faults.seed);
    update_active();
}

void FaultPath::hold(bool on) {
    std::lock_guard lock(mutex);
    hold_ = on;
    update_active();
}

void FaultPath::update_active() {
    active_.store(hold_ || faults_.drop > 0 || faults_.duplicate > 0 || faults_.reorder > 0, std::memory_order_relaxed);
}

bool FaultPath::chance(double p) {
    if (p <= 0) return false;
    // 53 random bits as a double in [0, 1): the same draws on every standard library.
    return static_cast<double>(random_() >> 11) * 0x1.0p-53 < p;
}

void FaultPath::emit(Frame frame, bool twice, std::vector<Frame>& to) {
    if (twice) {
        to.emplace_back(frame.begin(), frame.end());
        ++counters_.duplicated;
    }
    to.push_back(std::move(frame));
}

void FaultPath::apply(std::vector<Frame>& in, std::vector<Frame>& to) {
    std::size_t lost = 0;  // the lost ones, kept at the front of `in`
    auto release_due = [&] {
        // Out behind the frame just passed, in the order they were held back.
        for (auto w = waiting_.begin(); w != waiting_.end();) {
            if (w->frames_left != 0) {
                ++w;
                continue;
            }
            emit(std::move(w->frame), w->twice, to);
            w = waiting_.erase(w);
        }
    };
    for (Frame& f : in) {
        bool gone = false;
        if (hold_) {
            ++counters_.held;
            gone = true;
        } else if (chance(faults_.drop)) {
            ++counters_.dropped;
            gone = true;
        }
        // Frames held back let this one pass (lost or not) before their turn comes.
        bool due = false;
        for (Waiting& w : waiting_) {
            if (!w.overtaken) ++counters_.reordered;
            w.overtaken = true;
            due |= --w.frames_left == 0;
        }
        if (gone) {
            if (&in[lost] != &f) std::swap(in[lost], f);
            ++lost;
        } else if (chance(faults_.reorder)) {
            const auto later = static_cast<unsigned>(1 + random_() % (faults_.reorder_window - 1));
            waiting_.push_back({std::move(f), later, chance(faults_.duplicate), false});
        } else {
            emit(std::move(f), chance(faults_.duplicate), to);
        }
        if (due) release_due();
    }
    // Fewer frames followed than some were to let pass: they come out last.
    for (Waiting& w : waiting_) w.frames_left = 0;
    release_due();
    in.resize(lost);
}

Cable::FaultCounters FaultPath::counters() const {
    std::lock_guard lock(mutex);
    Cable::FaultCounters c = counters_;
    c.carried = carried_.load(std::memory_order_relaxed);
    return c;
}

void FaultPath::reset_counters() {
    std::lock_guard lock(mutex);
    counters_ = {};
    carried_.store(0, std::memory_order_relaxed);
}

}  // namespace detail

std::size_t Cable::Link::carry(unsigned from, std::vector<Frame>& frames) {
    if (capture.on()) capture.write(frames);
    detail::FaultPath& path = faults[from];
    if (!path.active()) {
        path.count(frames.size());
        return forward(1 - from, frames);
    }
    // The faults of this direction, then what comes out forwarded under the path's lock,
    // so that nothing overtakes it; the lost frames and those forward left are the
    // caller's to reuse. The frames count as carried once their faults are counted, so
    // that counters() never sees a frame carried whose fate it does not yet show.
    std::lock_guard lock(path.mutex);
    const std::size_t carried = frames.size();
    path.apply(frames, path.out);
    path.count(carried);
    const std::size_t unplugged = path.out.empty() ? 0 : forward(1 - from, path.out);
    for (Frame& f : path.out)
        if (f.capacity() != 0) frames.push_back(std::move(f));
    path.out.clear();
    return unplugged;
}

std::size_t Cable::Link::deliver_to(unsigned to, std::vector<Frame>& frames) {
    std::lock_guard lock(mutex);  // the port outlives this: it unplugs under `mutex`
    Model::Impl* port = ends[to];
    Model::Impl* sender = ends[1 - to];
    if (port == nullptr) return frames.size();
    const std::uint32_t backlog = port->deliver(frames, Event::from_wire);
    // The sender is the caller, inside its step (peer_full is its step's): where the
    // sender end has a port, and is still plugged.
    if (sender != nullptr) sender->peer_full = Model::Impl::pause_peer(backlog);
    return 0;
}

void Cable::Link::plug(std::array<Model::Impl*, 2> nics) {
    std::unique_lock<std::mutex> plugs[2];
    for (unsigned i = 0; i < 2; ++i)
        if (nics[i] != nullptr) plugs[i] = std::unique_lock(nics[i]->link_mutex, std::defer_lock);
    if (plugs[0].mutex() && plugs[1].mutex()) std::lock(plugs[0], plugs[1]);
    else if (plugs[0].mutex()) plugs[0].lock();
    else if (plugs[1].mutex()) plugs[1].lock();
    for (Model::Impl* e : nics) {
        if (e == nullptr) continue;
        if (auto old = e->link.lock()) {
            std::lock_guard l(old->mutex);
            if (old->ends[e->link_end] == e) throw std::invalid_argument("bnxt cable: a NIC is plugged already");
        }
    }
    std::lock_guard l(mutex);
    for (unsigned i = 0; i < 2; ++i) {
        ends[i] = nics[i];
        if (nics[i] == nullptr) continue;
        nics[i]->link = weak_from_this();
        nics[i]->link_end = i;
    }
}

void Cable::Link::unplug() {
    std::lock_guard l(mutex);
    ends = {};
}

void Cable::Link::take_spares(std::vector<Frame>& to, std::size_t most) {
    std::lock_guard lock(mutex);
    const auto batch = pool.end() - static_cast<std::ptrdiff_t>(std::min(most, pool.size()));
    to.insert(to.end(), std::make_move_iterator(batch), std::make_move_iterator(pool.end()));
    pool.erase(batch, pool.end());
}

void Cable::Link::give_spares(std::vector<Frame>& from, std::size_t keep, std::size_t pool_most) {
    std::lock_guard lock(mutex);
    while (from.size() > keep && pool.size() < pool_most) {
        pool.push_back(std::move(from.back()));
        from.pop_back();
    }
}

void Cable::Link::commit_pool(std::size_t count) {
    std::vector<Frame> made(count);
    for (Frame& f : made) {
        f.resize(detail::max_frame_bytes);
        std::fill(f.begin(), f.end(), std::byte{0});  // commits the pages now
        f.clear();
    }
    std::lock_guard lock(mutex);
    pool.insert(pool.end(), std::make_move_iterator(made.begin()), std::make_move_iterator(made.end()));
}

Cable::Cable(std::shared_ptr<Link> link) : link_(std::move(link)) {}

Cable::~Cable() {
    link_->unplug();
    link_->capture.close();
}

rig::Result<void> Cable::capture(const std::filesystem::path& path) { return link_->capture.open(path); }

void Cable::stop_capture() { link_->capture.close(); }

void Cable::inject(const Faults& faults) {
    Faults second = faults;
    ++second.seed;
    link_->faults[0].set(faults);
    link_->faults[1].set(second);
}

void Cable::inject(End from, const Faults& faults) { link_->faults[std::to_underlying(from)].set(faults); }

void Cable::hold() {
    for (auto& path : link_->faults) path.hold(true);
}

void Cable::resume() {
    for (auto& path : link_->faults) path.hold(false);
}

Cable::FaultCounters Cable::fault_counters(End from) const {
    return link_->faults[std::to_underlying(from)].counters();
}

void Cable::reset_fault_counters() {
    for (auto& path : link_->faults) path.reset_counters();
}

namespace {

// The pool a Wire starts with, its memory committed, as a port's packet buffers are there
// from power-on: enough for a receiver to hold the 1024 spares it keeps before it gives
// any back while its peer keeps sending. Without it the first transfer after the cable is
// plugged built every frame in new memory and paid a page fault per 4 KiB on the model's
// thread (20 to 30 ms for the first 16 MiB p2p_copy moved).
constexpr std::size_t wire_pool_first = 2048;

struct WireLink final : Cable::Link {
    std::size_t forward(unsigned to, std::vector<Frame>& frames) override { return deliver_to(to, frames); }
};

std::shared_ptr<Cable::Link> wire_link(Model& a, Model& b) {
    if (&a == &b) throw std::invalid_argument("bnxt Wire: both ends are the same NIC");
    return std::make_shared<WireLink>();
}

}  // namespace

Wire::Wire(Model& a, Model& b) : Cable(wire_link(a, b)) {
    link_->commit_pool(wire_pool_first);
    link_->plug({impl(a), impl(b)});
}

Wire::~Wire() = default;

}  // namespace rig::bnxt::sim
