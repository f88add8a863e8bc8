// rig/bnxt/sim/cable.hpp: what every cable of a bnxt model's Ethernet port can do. A cable
// carries whole Ethernet frames (destination MAC to the end of the payload; no preamble,
// no FCS) between two ends: `Wire` (wire.hpp) joins two models in this process,
// `DatagramCable` (datagram.hpp) joins one model to a UDP socket, one frame per datagram.
//
// Every frame a cable carries, in either direction, passes one point of the cable as its
// sender hands it over; that is where a capture sees it (before the cable delivers it, or
// loses it on the way).
//
// Lifetime: a Cable unplugs its ports when it is destroyed; a Nic may be destroyed first
// (its end is then unplugged). Thread safety: capture and stop_capture may be called from
// any thread, while the models run and frames cross.
#pragma once

#include <filesystem>
#include <memory>

#include "rig/bnxt/sim/nic.hpp"
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

    struct Link;

protected:
    explicit Cable(std::shared_ptr<Link> link);
    static Nic::Impl* impl(Nic& nic) { return nic.impl_.get(); }
    std::shared_ptr<Link> link_;
};

}  // namespace rig::bnxt::sim
