// rig/bnxt/sim/datagram.hpp: a cable from a bnxt model's port to a UDP socket: the port is
// bound to a local UDP address and sends to one remote address, one whole Ethernet frame
// (destination MAC to the end of the payload, no FCS) per datagram and nothing else in
// it. That is the framing of QEMU's `-netdev dgram,local.type=inet,...,remote.type=inet,...`
// and `-netdev socket,udp=...,localaddr=...` (net/dgram.c, net/socket.c), so the other
// end may be another process's model, a model on another host, or a QEMU guest's NIC
// (virtio-net, e1000).
//
// What it checks of what arrives: a datagram from another address than the remote one, one
// shorter than an Ethernet header (14 bytes) or longer than the longest frame the port
// takes (the path MTU of 4096 bytes and the headers of the longest RoCE packet) is
// dropped and counted. Nothing else: the port checks the frames it is given.
//
// UDP has no flow control: datagrams the receiving socket has no room for are dropped by
// the kernel (counted in receive_overflows, from SO_RXQ_OVFL) and the RC transport
// retransmits them. The socket asks for 32 MiB of receive buffer (SO_RCVBUFFORCE where
// the process may, else SO_RCVBUF, which net.core.rmem_max caps).
//
// Threads: the cable receives on a thread of its own, which hands each batch of up to 64
// datagrams to the model's inbox and wakes it; it sends on the model's thread, at the end
// of each step, in sendmmsg batches.
//
// Lifetime: from bind (or open) to destruction the Model is plugged into this cable (it may
// be plugged into one cable only); frames it sends before connect, or after the cable or
// the Model is gone, are dropped and counted in the Model's frames_dropped. Destroying the
// cable stops its thread, unplugs the Model and closes the socket. Thread safety: every
// member may be called from any thread while the model runs; connect at most once.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "rig/bnxt/sim/cable.hpp"

namespace rig::bnxt::sim {

class DatagramCable final : public Cable {
public:
    // What crossed the socket since bind, in datagrams (one frame each).
    struct Counters {
        std::uint64_t datagrams_sent = 0;
        std::uint64_t datagrams_received = 0;  // handed to the port (or dropped: unplugged)
        std::uint64_t not_ethernet = 0;        // shorter than 14 bytes or longer than a frame
        std::uint64_t foreign = 0;             // from an address other than the remote one
        std::uint64_t receive_overflows = 0;   // dropped by the kernel: receive buffer full
        std::uint64_t send_failures = 0;       // not sent: refused (ECONNREFUSED), no buffer
        std::uint64_t unplugged = 0;           // received while the Model was gone
    };

    // Binds `nic`'s port to `local`, "IPv4:port" or "[IPv6]:port" (numeric addresses;
    // port 0: one the kernel chooses, see local()), and plugs it in. Errors naming the
    // address: not an address and port, not an address of this host, the port in use.
    // Throws std::invalid_argument if `nic` is plugged into a cable already.
    static rig::Result<std::unique_ptr<DatagramCable>> bind(Model& nic, std::string_view local);
    // Sends to `remote` from now on and takes datagrams only from it. Errors naming the
    // address: not an address and port, port 0 or an unspecified address, another family
    // than local's, no route. Throws std::logic_error if connected already.
    rig::Result<void> connect(std::string_view remote);
    // bind, then connect.
    static rig::Result<std::unique_ptr<DatagramCable>> open(Model& nic, std::string_view local,
                                                            std::string_view remote);

    ~DatagramCable() override;

    // The bound address, "127.0.0.1:40123" or "[::1]:40123"; the remote one ("" before
    // connect).
    std::string local() const;
    std::string remote() const;
    Counters counters() const;
    // An error naming both addresses where the last datagram sent or received failed (the
    // peer refused it: ICMP port unreachable, ECONNREFUSED; or the kernel refused it)
    // and no datagram has come from the peer since; else success.
    rig::Result<void> status() const;

private:
    explicit DatagramCable(std::shared_ptr<Link> link);
};

}  // namespace rig::bnxt::sim
