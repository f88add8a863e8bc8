// rig/bnxt/sim/cable.hpp: what every cable of a bnxt model's Ethernet port can do. A cable
// carries whole Ethernet frames (destination MAC to the end of the payload; no preamble,
// no FCS) between two ends: `Wire` (wire.hpp) joins two models in this process,
// `DatagramCable` (datagram.hpp) joins one model to a UDP socket, one frame per datagram.
//
// Every frame a cable carries, in either direction, passes one point of the cable as its
// sender hands it over; that is where a capture sees it (before the cable delivers it, or
// loses it on the way), and where the cable's faults act on it (inject, hold): a cable
// can lose, duplicate and reorder frames as a real network does, which the RC transport
// recovers from (IBA vol. 1 §9.7: the responder's sequence NAKs and duplicate detection,
// the requester's retransmission on NAK and local ACK timeout). A capture shows each frame
// once, as it was handed over, lost or not.
//
// Lifetime: a Cable unplugs its ports when it is destroyed; a Model may be destroyed first
// (its end is then unplugged). Thread safety: every member may be called from any thread,
// while the models run and frames cross.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>

#include "rig/bnxt/sim/model.hpp"
#include "rig/result.hpp"

namespace rig::bnxt::sim {

class Cable {
public:
    virtual ~Cable();
    Cable(const Cable&) = delete;
    Cable& operator=(const Cable&) = delete;

    // Writes every frame the cable carries from now on, both ways, to a pcap file at
    // `path` (created or truncated): link type DLT_EN10MB (Ethernet), timestamps of the
    // system's real-time clock in nanoseconds, non-decreasing, each taken as the frame
    // enters the cable; whole frames (snap length 65535). A capture already running is
    // closed first. Error naming the path where libpcap cannot open it. A cable that
    // captures nothing pays one relaxed atomic load per batch of frames.
    rig::Result<void> capture(const std::filesystem::path& path);
    // Flushes and closes the capture file; idempotent. Destroying the cable does it too.
    void stop_capture();

    // A cable's two ends, each a sender of one direction: for a Wire(a, b) `first` is a's
    // port and `second` b's; for a DatagramCable `first` is the port and `second` the
    // socket (the datagrams that arrive from the remote peer).
    enum class End { first, second };

    // What the cable does to the frames one end sends, each decided per frame by that
    // direction's own pseudo-random generator (a 64-bit Mersenne Twister seeded with
    // `seed`, std::mt19937_64), so that a run whose frames cross in the same order (models
    // stepped by hand) meets the same faults. In order: a frame is lost with probability
    // `drop`; else it is held back with probability `reorder` and comes out behind 1 to
    // reorder_window - 1 (uniformly) of the frames handed over with it, or at the end of
    // them where fewer follow (so a frame moves at most reorder_window - 1 places, and one
    // sent alone is not held back: a network delays it, but there is nothing to overtake
    // it); and it comes out twice, the copy right behind it, with probability `duplicate`.
    // The frames handed over together are those a port's step sends at once (up to 64),
    // or a batch the datagram cable's socket received (up to 64).
    struct Faults {
        double drop = 0;
        double duplicate = 0;
        double reorder = 0;
        unsigned reorder_window = 8;
        std::uint64_t seed = 1;
    };
    // Frames of one direction since the cable was made (or the last reset_fault_counters).
    struct FaultCounters {
        std::uint64_t carried = 0;     // handed to the cable by the sending end
        std::uint64_t dropped = 0;     // lost by `drop`
        std::uint64_t held = 0;        // lost while the cable held (hold)
        std::uint64_t duplicated = 0;  // sent twice (one count per copy)
        std::uint64_t reordered = 0;   // held back, and a later frame came out first
    };

    // Applies `faults` to the frames both ends send from now on (each direction seeded
    // with faults.seed, the second end's with faults.seed + 1); all zero: the cable
    // carries every frame, in order, once. Throws std::invalid_argument for a probability outside [0, 1] or a reorder
    // with reorder_window below 2.
    void inject(const Faults& faults);
    // The same for the frames of one end only, seeded with faults.seed.
    void inject(End from, const Faults& faults);
    // A cable that carries nothing (a link down): every frame either end sends until
    // resume is lost and counted (held). Idempotent, as is resume.
    void hold();
    void resume();
    FaultCounters fault_counters(End from) const;
    void reset_fault_counters();

    struct Link;

protected:
    explicit Cable(std::shared_ptr<Link> link);
    static Model::Impl* impl(Model& nic) { return nic.impl_.get(); }
    std::shared_ptr<Link> link_;
};

}  // namespace rig::bnxt::sim
