// p2p_copy's job on a Pair of machines: which paths run, in what order, and each one's
// outcome (report.hpp), from the first post to the destination's checksum.
//
// Choice::Both runs peer-to-peer, then bounce. Choice::Auto runs peer-to-peer where
// forwards(GPU, NIC) holds on both machines and the NICs register their GPUs' BARs, and
// the bounce path otherwise, saying which and why. Choice::P2p and Choice::Bounce run that
// path or refuse it with the reason: never another (docs/bugs.md B09: a pin that contradicts
// the bus is refused with the reason, not silently obeyed or ignored).
//
// Before each path the destination is overwritten with another fill pattern, so that a
// path that moves nothing cannot verify; a path is verified when the checksum machine 2's
// GPU computes over the destination equals the one machine 1's GPU computes over the source.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>

#include "paths.hpp"
#include "report.hpp"

namespace p2p_copy {

enum class Choice { Both, Auto, P2p, Bounce };

struct Options {
    std::uint64_t size = std::uint64_t{256} << 20;  // bytes
    Choice choice = Choice::Both;
    Mode mode = Mode::SendRecv;        // of both paths' NIC-to-NIC step (--pull: Mode::Read)
    Pipeline pipeline;                 // cut to `size` where it is longer (a chunk at most `size`, in pages)
    std::uint64_t seed = 0x5eed'0001;  // of the source's fill pattern
    // --mtu: the queue pairs' path MTU at most this (rig::bnxt::Path::mtu); nullopt: the ports'.
    std::optional<rig::bnxt::Mtu> mtu;
};

// A progress callback for a path about to run, or an empty one.
using ProgressFor = std::function<Progress(Path)>;
// Called once a path's transfer ended (to end a progress line).
using Done = std::function<void(Path)>;

// The pipeline cut to a transfer of `size` bytes: a chunk no longer than the buffer (in
// whole pages), and no more chunks in flight than there are, so that moving 1 MiB stages
// no 16 x 128 MiB. copy() runs with it.
Pipeline fitted(Pipeline p, std::uint64_t size);

// Runs the chosen paths. Error naming the machine and the step where the machines cannot
// be set up for any path (connecting the queue pairs, allocating GPU memory, filling it).
// A path's own failure is its Outcome (ran, not verified, the reason).
rig::Result<Report> copy(Pair& pair, const Options& options, const ProgressFor& progress = {}, const Done& done = {});

// 0 where at least one path ran and every path that ran was verified, and no path the
// user chose alone (Choice::P2p, Choice::Bounce) was refused; else 1.
int exit_status(const Report& report, Choice choice);

}  // namespace p2p_copy
