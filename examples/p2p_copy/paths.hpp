// The two ways p2p_copy moves GPU memory of machine 1 into GPU memory of machine 2
// (docs/design.md, "The data path of the main job"):
//
//  - peer-to-peer: each NIC registers its GPU's memory by its BAR runs (Region::device);
//    the receiver posts receives into its GPU region and the sender sends from its own
//    (Mode::SendRecv), or the receiver reads the sender's region (Mode::Read, an RDMA READ).
//    The bytes cross each machine's bus once, NIC to GPU BAR.
//  - bounce: the GPU's copy engine copies a chunk into host memory, the NICs move it host
//    region to host region (Mode::SendRecv; or Mode::Read: machine 2 reads machine 1's
//    host region), and the other GPU's engine copies it in: every byte crosses each bus
//    twice more.
//
// Both cut the transfer into chunks (messages) and keep `depth` of them in flight, as a
// NIC's throughput needs. A receive is always posted before the send it takes, so no send
// waits on the receiver-not-ready timer. The completion is the point at which a chunk's
// bytes are in the destination (docs/bugs.md B27; region.hpp): nothing reads them earlier.
//
// Everything here runs on the calling thread; the NIC models run on their own.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "machines.hpp"
#include "rig/bnxt/cq.hpp"
#include "rig/bnxt/qp.hpp"
#include "rig/bnxt/region.hpp"
#include "rig/gpu/gpu.hpp"

namespace p2p_copy {

enum class Path { P2p, Bounce };
enum class Mode { SendRecv, Read };
std::string_view to_string(Path path);  // "p2p", "bounce"

// How a transfer is cut: messages of at most `chunk` bytes (> 0), at most
// `depth` of them in flight. Reads are bounded further by the NIC's initiator depth.
struct Pipeline {
    std::uint64_t chunk = std::uint64_t{1} << 20;
    std::uint32_t depth = 16;
};

// A transfer of `bytes` cut into chunks of `chunk` bytes (the last one shorter).
struct Chunks {
    std::uint64_t bytes, chunk;
    std::uint64_t count() const { return (bytes + chunk - 1) / chunk; }
    std::uint64_t offset(std::uint64_t i) const { return i * chunk; }
    std::uint64_t length(std::uint64_t i) const { return std::min(chunk, bytes - i * chunk); }
};

// Error naming the machine, the work request (`what`: "send", "receive", "read") and its
// chunk, and the completion's status where `c` failed, or its byte count where
// `exact_bytes` and it is not the chunk's length.
rig::Result<void> check_completion(const rig::bnxt::Completion& c, const Side& side, const char* what,
                                   const Chunks& chunks, bool exact_bytes);

// Called on the transfer's thread with the bytes in the destination so far.
using Progress = std::function<void(std::uint64_t done)>;

// A reliable-connected queue pair on each NIC, connected to each other; each with one Cq
// that takes its sends, receives and reads.
struct Link {
    std::optional<rig::bnxt::Cq> cq[2];
    std::optional<rig::bnxt::Qp> qp[2];
    // Reads in flight at once: the smaller of the two NICs' initiator and responder depths.
    std::uint32_t read_depth = 1;

    // Its queue pairs' path MTU at most `mtu` (rig::bnxt::Path::mtu), the ports' where nullopt.
    // Error naming the machine and the step (CREATE_CQ, CREATE_QP, MODIFY_QP) that failed.
    static rig::Result<Link> connect(Pair& pair, std::uint32_t depth, std::optional<rig::bnxt::Mtu> mtu = std::nullopt);
};

// Whether each machine's bus carries its NIC's requests to its GPU's BAR, in words for the
// report: the distance and verdict on each machine, and where one does not forward, the
// bridges that redirect and the host-bridge rule that refused.
struct Forwarding {
    bool both = false;
    std::string reason;
};
Forwarding forwarding(const Pair& pair);
// One machine's part of it: "distance switch, forwards (direct below 0000:01:00.0)".
std::string summary(const rig::pci::Route& route, rig::pci::Addressing nic);
// Where the route is direct and the NIC behind an IOMMU, what that asks on a real machine
// (rig/pci/groups.hpp direct_behind_iommu): "; behind an IOMMU this direct route means ...,
// and VFIO takes the NIC only with the GPU free of its vendor driver ..."; else empty.
std::string group_note(const Side& side, const rig::pci::Route& route);

// GPU memory of `bytes` on each machine: `source` on machine 1, `destination` on 2.
struct Buffers {
    rig::gpu::Memory source, destination;
    std::uint64_t bytes = 0;
    static rig::Result<Buffers> allocate(Pair& pair, std::uint64_t bytes);
};

// The peer-to-peer path over registered device regions of both buffers. open is Error
// where a NIC refuses Region::device (behind an IOMMU; the firmware), naming the machine.
class PeerToPeer {
public:
    static rig::Result<PeerToPeer> open(Pair& pair, Link& link, const Buffers& buffers, Mode mode, Pipeline pipeline);
    // Moves bytes [0, bytes) of the source into the destination. Error naming the
    // machine, the chunk and the completion's status where a work request fails, or the
    // bytes that had arrived where no completion came for 30 s.
    rig::Result<void> run(std::uint64_t bytes, const Progress& progress = {});

private:
    PeerToPeer(Link& link, rig::bnxt::Region source, rig::bnxt::Region destination, Mode mode, Pipeline pipeline)
        : link_(&link),
          source_(std::move(source)),
          destination_(std::move(destination)),
          mode_(mode),
          pipeline_(pipeline) {}
    Pair* pair_ = nullptr;
    Link* link_;
    rig::bnxt::Region source_, destination_;  // deregistered by their last handle
    std::uint64_t offsets_[2] = {};           // of each buffer's first byte in its region (B13)
    Mode mode_;
    Pipeline pipeline_;
};

// The bounce path through `depth` chunks of host memory on each machine that both the
// GPU's copy engine and the NIC reach, pinned as the hardware requires (Staging). open is
// Error naming the machine where there is no such memory or the NIC refuses the region.
class Bounce {
public:
    static rig::Result<std::unique_ptr<Bounce>> open(Pair& pair, Link& link, const Buffers& buffers, Mode mode,
                                                     Pipeline pipeline);
    Bounce(const Bounce&) = delete;
    Bounce& operator=(const Bounce&) = delete;
    ~Bounce();  // deregisters the host regions and gives their memory back
    rig::Result<void> run(std::uint64_t bytes, const Progress& progress = {});
    // Whose host memory each machine stages in, for the report.
    std::string memory() const;

    // Host memory of one machine, pinned for both devices, the NIC's pin a region over its
    // pages (Region::pages). Whose memory it is follows from how the NIC reaches memory:
    //  - a NIC behind an IOMMU pins any page of the process into its own domain, at IOVAs
    //    the GPU cannot use: the memory is the GPU's (Gpu::host, as cudaHostAlloc and then
    //    ibv_reg_mr), which the GPU reaches at its own bus addresses (take_gpu_host_memory);
    //  - a NIC at physical addresses pins only memory its own function allocated
    //    (Function::pin): the memory is the NIC's DMA memory, which a GPU at physical
    //    addresses reaches at the same runs (take_nic_dma_memory). A GPU behind an IOMMU
    //    beside such a NIC does not: its copies fault at the first address.
    struct Staging {
        const rig::bnxt::Nic* nic = nullptr;
        rig::pci::Dma dma;                           // the NIC's DMA memory, or none
        std::optional<rig::gpu::HostMemory> pinned;  // the GPU's host memory, or none
        rig::gpu::HostBuffer host;                   // what the GPU's copies take: one of the two
        std::optional<rig::bnxt::Region> region;
        std::string_view whose;  // in words, for memory()

        rig::Result<void> take_gpu_host_memory(const rig::gpu::Gpu& gpu, std::uint64_t bytes);
        rig::Result<void> take_nic_dma_memory(std::uint64_t bytes);
        rig::Result<void> register_pages();
        // Deregisters the region and gives the NIC's DMA memory back (the GPU's host
        // memory goes with the Staging); nothing once the NIC closed.
        void release();
    };
    // Whose host memory each machine stages in, in words: "host memory on each machine:
    // <whose>", or each machine's where they differ.
    static std::string memory(const std::string& one, std::string_view one_whose, const std::string& two,
                              std::string_view two_whose);

private:
    Bounce(Pair& pair, Link& link, const Buffers& buffers, Mode mode, Pipeline pipeline)
        : pair_(&pair), link_(&link), buffers_(buffers), mode_(mode), pipeline_(pipeline) {}
    Pair* pair_;
    Link* link_;
    Buffers buffers_;
    Mode mode_;
    Pipeline pipeline_;
    Staging staging_[2];
};

// The checksums of bytes [0, bytes) of the source and the destination, each computed on
// its own GPU. Error naming the GPU where one fails.
struct Checksums {
    std::uint64_t source = 0, destination = 0;
    bool equal() const { return source == destination; }
};
rig::Result<Checksums> checksums(Pair& pair, const Buffers& buffers, std::uint64_t bytes);

}  // namespace p2p_copy
