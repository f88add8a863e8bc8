// p2p_copy's job as two processes (README.md, "Across processes and hosts"): this process
// is one machine (Local, machines.hpp), the sender (machine 1, `--connect HOST:PORT`) or
// the receiver (machine 2, `--listen [ADDR:]PORT`), and the other machine is the peer at
// the far end of a bootstrap connection (rig::bootstrap; the messages and their order are
// messages.hpp's). The two NICs' ports are cabled by datagram cables between the two
// processes' addresses of that connection.
//
// Setup, each step an Error naming the peer where it fails:
//  1. Hello both ways: the peer must have the other role and the same job (size, chunk,
//     depth, mode, choice: the receiver answers a different one with a Failure naming
//     each difference); each Hello carries the UDP port of its side's cable.
//  2. The cable connects to the peer's: the peer's address of the connection, at the port
//     its Hello named (or, where it named none, the peer's port of the connection).
//  3. A queue pair each; QueuePair both ways; connect (RTR, RTS) with `retries`.
//  4. The GPU buffer (source on machine 1, filled; destination on machine 2).
// Then each path copy.hpp's choice runs, each side opening it for itself (p2p: its bus
// forwards and its NIC registers its GPU's BAR; bounce: its host memory) and telling the
// other (PathOpen); a path runs where both opened it, and is refused with both sides'
// reasons otherwise (Choice::Auto: bounce only where p2p was refused). A path ends with
// the receiver's Outcome (bytes and the destination's checksum), then the sender's (the
// source's): each side judges the path verified where the two checksums are equal.
//
// Who waits for what during a transfer, and how a peer that goes away ends it:
//  - the requester (the sender's sends; the receiver's reads with Mode::Read) has work in
//    flight: where the peer stops answering, its queue pair retransmits and gives up
//    after the retry budget (retry_budget), and the completion's status is the error.
//    Where the connection closes meanwhile (the peer's process ended), it waits for that
//    completion for up to twice the budget and a second more, then gives up without it.
//  - the other side has nothing in flight that could fail (receives posted; a region
//    read from): the connection's close is the error, at once, with how far it got.
//  - either side: a Failure from the peer, a message that breaks the order or counts
//    that go backwards or beyond the transfer, or no progress at all for 30 s with the
//    peer still connected. Every such error is sent to the peer as a Failure where the
//    connection still stands, and the connection then closes.
// Every wait is bounded: each message by the Peer's timeout, a transfer by the above.
//
// Everything runs on the calling thread; the NIC model and the cable run on their own.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "copy.hpp"
#include "machines.hpp"
#include "report.hpp"
#include "rig/bnxt/qp.hpp"
#include "rig/bootstrap/peer.hpp"

namespace p2p_copy {

using rig::bootstrap::Role;

// How long a queue pair retransmits without an acknowledgement before its work request
// completes with TRANSPORT_RETRY_CNT_ERR: the local ACK timeout (4.096 us x 2^timeout,
// IBA 9.7.6.1.1) once, then once for each of retry_cnt retries.
std::chrono::nanoseconds retry_budget(const rig::bnxt::Retries& retries);
// "ACK timeout 67.1 ms x 8 tries (1 + retry_cnt 7) = 537 ms".
std::string retry_words(const rig::bnxt::Retries& retries);

// This process's side of the job with `peer`, on `local`: setup, then the paths. The
// Report holds this side's outcomes (the sender's bytes and time, the receiver's, each
// with the verification both sides agree on). Error naming the peer and the step where
// setup fails, a transfer fails (the completion's status), or the peer goes away.
rig::Result<Report> run_side(Local& local, rig::bootstrap::Peer& peer, Role role, const Options& options,
                             const rig::bnxt::Retries& retries = {}, const ProgressFor& progress = {},
                             const Done& done = {});

}  // namespace p2p_copy
