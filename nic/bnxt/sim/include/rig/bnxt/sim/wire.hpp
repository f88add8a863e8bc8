// rig/bnxt/sim/wire.hpp: a cable between the ports of two bnxt models in this process, on
// one simulated machine or on two. It carries their Ethernet frames in order and without
// loss (unless faults are injected, cable.hpp), from the transmitting model's step into
// the receiving model's inbox, where the receiver's next step takes them. The frames an event makes cross when the step that
// handles it ends (64 at a time, for events that make more). As RoCE's lossless Ethernet
// does (PFC, IEEE 802.1Qbb), a model running on its own thread pauses between events while
// its peer, also on its own thread, holds 512 frames from the wire not yet taken, until
// that peer is down to 256 (or 1 ms has passed); stepping by hand never pauses.
//
// Constructing a Wire commits the two ports' frame buffers (2048 of the longest frame,
// about 8.2 MiB), so that a first transfer does not build its frames in new memory.
//
// Lifetime: a Wire joins the two Nics from construction to destruction; destroying it (or
// either Model) unplugs the cable, after which frames are dropped and counted. A Model is
// plugged into at most one cable. Thread safety: frames may be sent from both models'
// threads at once; constructing and destroying a Wire may race with both.
#pragma once

#include "rig/bnxt/sim/cable.hpp"

namespace rig::bnxt::sim {

class Wire final : public Cable {
public:
    // Throws std::invalid_argument if a and b are the same Model or either is plugged.
    Wire(Model& a, Model& b);
    ~Wire() override;
};

}  // namespace rig::bnxt::sim
