// The transfer of one path on each side of a two-process job (session.hpp has the rules:
// who waits for what, and how a peer that goes away ends a transfer). session.cpp sets up
// a Session and opens each path; the four loops here move its bytes: push (SENDs into
// posted receives) and pull (RDMA READs), each from the sender's and from the receiver's
// side.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "machines.hpp"
#include "paths.hpp"
#include "rig/bnxt/cq.hpp"
#include "rig/bnxt/qp.hpp"
#include "rig/bnxt/region.hpp"
#include "rig/bootstrap/peer.hpp"
#include "rig/gpu/gpu.hpp"
#include "session.hpp"

namespace p2p_copy {

// A path as rig::bootstrap's messages name it.
inline rig::bootstrap::Path wire_path(Path p) {
    return p == Path::P2p ? rig::bootstrap::Path::P2p : rig::bootstrap::Path::Bounce;
}
inline Path path_of(rig::bootstrap::Path p) { return p == rig::bootstrap::Path::P2p ? Path::P2p : Path::Bounce; }

// What setup leaves for the paths.
struct Session {
    Local& local;
    rig::bootstrap::Peer& peer;
    Role role;
    Options options;  // the pipeline fitted to the size
    rig::bnxt::Retries retries;
    std::optional<rig::bnxt::Cq> cq;  // the queue pair's sends, receives and reads
    std::optional<rig::bnxt::Qp> qp;
    std::uint32_t read_depth = 1;  // reads in flight: the reader's initiator depth, the peer's responder depth
    std::optional<rig::gpu::Memory> buffer;  // the source (sender) or the destination (receiver)
    // The receiver's Outcome where it came while the sender's last sends were still
    // waiting for their completions (the receiver has its bytes before the sender learns so).
    std::optional<rig::bootstrap::Outcome> outcome;

    Side& side() { return local.side; }
    const std::string& peer_name() const { return peer.address(); }
    Chunks chunks() const { return {options.size, options.pipeline.chunk}; }
    std::uint32_t depth() const { return options.pipeline.depth; }
};

// One path as this side opened it: the GPU buffer's device region (p2p), or host memory
// staged in (bounce); either way the region the NIC moves the bytes from or into.
struct Opened {
    Opened() = default;
    Opened(const Opened&) = delete;
    Opened& operator=(const Opened&) = delete;
    ~Opened();  // deregisters; gives the staging memory back

    Path path = Path::P2p;
    bool opened = false;
    std::string reason;                        // "machine 1: distance switch, forwards (...)"
    std::optional<rig::bnxt::Region> device;   // p2p: the buffer's runs
    std::uint64_t offset = 0;                  // p2p: the buffer's first byte in `device`
    std::unique_ptr<Bounce::Staging> staging;  // bounce: depth x chunk bytes

    const rig::bnxt::Region& region() const { return path == Path::P2p ? *device : *staging->region; }
    // Where chunk i lies in region(): after `offset` (p2p), in slot i mod depth (bounce).
    std::uint64_t at(std::uint64_t i, const Session& s) const;
    // The bytes of region() a peer may read from (Mode::Read on the sender).
    rig::bootstrap::RemoteRegion offered(const Session& s) const;
};

// How one side's transfer went: the bytes it moved and how long it took from its start
// (the sender: from its first send or from the path's start; the receiver: from its Ready
// or its first read) to its last completion.
struct Moved {
    std::uint64_t bytes = 0;
    double seconds = 0;
};

// The four loops. `theirs` is the peer's PathOpen (the regions a reader reads). Errors
// name this machine or the peer, what failed and how far the transfer got.
rig::Result<Moved> push_send(Session& s, Opened& mine, const Progress& progress);
rig::Result<Moved> push_receive(Session& s, Opened& mine, const Progress& progress);
rig::Result<Moved> pull_serve(Session& s, Opened& mine, const Progress& progress);  // the sender, read from
rig::Result<Moved> pull_read(Session& s, Opened& mine, const rig::bootstrap::PathOpen& theirs,
                             const Progress& progress);

}  // namespace p2p_copy
