// p2p_copy's paths in-process (examples/p2p_copy/paths.hpp): the exact bytes that arrive
// in machine 2's GPU memory, compared with the host's computation of the fill pattern, for
// every path; the bytes past the transfer untouched; and checksums that tell a transfer
// that did not happen.
#include "paths.hpp"

#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "rig/gpu/reference.hpp"
#include "rig/pci/function.hpp"
#include "rig/sim/topology.hpp"
#include "rig/text.hpp"

namespace p2p_copy {
namespace {

constexpr std::uint64_t KiB = 1024, MiB = 1024 * KiB;
constexpr std::uint64_t source_seed = 11, poison_seed = 12;

template <class T>
T must(rig::Result<T> r) {
    if (!r) throw std::runtime_error(r.error());
    return std::move(*r);
}
void must(rig::Result<void> r) {
    if (!r) throw std::runtime_error(r.error());
}

// The machines of `topology()` (switch) with `size` bytes of GPU memory on each side, the
// source filled and the destination poisoned.
class Paths : public ::testing::Test {
protected:
    static constexpr std::uint64_t size = 300 * KiB + 5;

    static rig::sim::Identity gpu() { return rig::gpu::sim::Model(gpu_config(64 * MiB)).identity(); }
    virtual Layout layout() const { return must(builtin("switch", gpu(), nic_identity())); }

    void SetUp() override {
        pair_ = must(open_pair(layout(), 64 * MiB));
        link_ = must(Link::connect(*pair_, 8));
        buffers_ = must(Buffers::allocate(*pair_, size));
        must(pair_->one.gpu->fill(buffers_->source, source_seed));
        must(pair_->two.gpu->fill(buffers_->destination, poison_seed));
    }
    void TearDown() override {
        buffers_.reset();
        link_.reset();
        pair_.reset();
    }

    // The destination's bytes, downloaded through machine 2's BAR.
    std::vector<std::byte> destination() {
        std::vector<std::byte> out(size);
        must(pair_->two.gpu->download(buffers_->destination, 0, out));
        return out;
    }
    // The first `arrived` bytes are the source's pattern, the rest still the poison.
    void expect_arrived(std::uint64_t arrived) {
        std::vector<std::byte> expected(size), poison(size);
        rig::gpu::reference::fill(expected, source_seed);
        rig::gpu::reference::fill(poison, poison_seed);
        std::copy(poison.begin() + static_cast<std::ptrdiff_t>(arrived), poison.end(),
                  expected.begin() + static_cast<std::ptrdiff_t>(arrived));
        const auto got = destination();
        std::uint64_t first_wrong = size;
        for (std::uint64_t i = 0; i < size; ++i)
            if (got[i] != expected[i]) {
                first_wrong = i;
                break;
            }
        EXPECT_EQ(first_wrong, size) << "first wrong byte";
    }

    std::unique_ptr<Pair> pair_;
    std::optional<Link> link_;
    std::optional<Buffers> buffers_;
};

TEST_F(Paths, P2pSendRecvMovesExactlyTheBytes) {
    auto path = must(PeerToPeer::open(*pair_, *link_, *buffers_, Mode::SendRecv, {64 * KiB, 3}));
    must(path.run(size));
    expect_arrived(size);
}

TEST_F(Paths, P2pReadMovesExactlyTheBytes) {
    auto path = must(PeerToPeer::open(*pair_, *link_, *buffers_, Mode::Read, {64 * KiB, 4}));
    must(path.run(size));
    expect_arrived(size);
}

// B18 (docs/bugs.md): GPU memory freed while a NIC region covers it, reallocated at the
// same address, and a receive into the old region overwrote the new memory and completed
// OK. The free is refused, naming the region's NIC and the range; the next allocation
// lies elsewhere, so the receive lands where the region says and nowhere else; once the
// region is deregistered the free succeeds.
TEST_F(Paths, FreeingGpuMemoryARegionCoversIsRefusedAndTheReceiveMissesTheNextAllocation) {
    std::optional<PeerToPeer> path = must(PeerToPeer::open(*pair_, *link_, *buffers_, Mode::SendRecv, {64 * KiB, 4}));
    const rig::gpu::Gpu& gpu = *pair_->two.gpu;
    const rig::gpu::Memory& old = buffers_->destination;
    const auto first = must(old.runs(0, 4096)).runs[0].address.value;
    const auto refused = gpu.free(old);
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().find(": the device region of 304 KiB of NIC " + pair_->two.nic->bus() +
                                   " covers bus addresses [" + rig::text::hex(first) + ", "),
              std::string::npos)
        << refused.error();
    EXPECT_NE(refused.error().find("deregister the region first"), std::string::npos) << refused.error();

    const rig::gpu::Memory next = must(gpu.alloc(size));
    EXPECT_NE(next.address(), old.address());
    must(gpu.fill(next, 13));
    must(path->run(size));  // receives into the old region
    expect_arrived(size);
    EXPECT_EQ(must(gpu.checksum(next)), rig::gpu::reference::fill_checksum(13, size))
        << "the receive wrote the next allocation";

    path.reset();  // deregisters both regions
    must(gpu.free(old));
}

// 4 KiB chunks through 3 host slots: each slot is reused 25 times.
TEST_F(Paths, BounceMovesExactlyTheBytesThroughReusedSlots) {
    auto path = must(Bounce::open(*pair_, *link_, *buffers_, Mode::SendRecv, {4 * KiB, 3}));
    must(path->run(size));
    expect_arrived(size);
}

// Machine 2 reads machine 1's host slots: 4 KiB chunks through 3 slots, each reused 25
// times, so a slot refilled before its last read completed would show.
TEST_F(Paths, BounceReadMovesExactlyTheBytesThroughReusedSlots) {
    auto path = must(Bounce::open(*pair_, *link_, *buffers_, Mode::Read, {4 * KiB, 3}));
    must(path->run(size));
    expect_arrived(size);
}

// Reads take no receive: one posted on machine 2 before the run is still posted after it
// (a send would have landed in it, and the chunk would be missing from the destination).
TEST_F(Paths, BounceReadLeavesMachine2sReceivesAlone) {
    auto spare = must(rig::bnxt::Region::host(*pair_->two.nic, 4 * KiB));
    ASSERT_TRUE(link_->qp[1]->post(rig::bnxt::Recv{.region = &spare, .bytes = 4 * KiB, .id = 999}));
    auto path = must(Bounce::open(*pair_, *link_, *buffers_, Mode::Read, {4 * KiB, 3}));
    must(path->run(size));
    expect_arrived(size);
    std::array<rig::bnxt::Completion, 4> out;
    EXPECT_EQ(link_->cq[1]->poll(out), 0u);
}

TEST_F(Paths, APartialTransferLeavesTheRestAndChecksumsTellIt) {
    auto path = must(PeerToPeer::open(*pair_, *link_, *buffers_, Mode::SendRecv, {64 * KiB, 4}));
    const std::uint64_t part = 100 * KiB + 3;
    must(path.run(part));
    expect_arrived(part);
    const auto partial = must(checksums(*pair_, *buffers_, part));
    EXPECT_TRUE(partial.equal());
    EXPECT_EQ(partial.source, rig::gpu::reference::fill_checksum(source_seed, part));
    const auto whole = must(checksums(*pair_, *buffers_, size));
    EXPECT_FALSE(whole.equal());
    EXPECT_EQ(whole.source, rig::gpu::reference::fill_checksum(source_seed, size));
}

TEST_F(Paths, OnePathRunsAgainAndAgainOnOneLink) {
    auto send = must(PeerToPeer::open(*pair_, *link_, *buffers_, Mode::SendRecv, {32 * KiB, 8}));
    auto bounce = must(Bounce::open(*pair_, *link_, *buffers_, Mode::SendRecv, {32 * KiB, 2}));
    for (int i = 0; i < 3; ++i) {
        must(pair_->two.gpu->fill(buffers_->destination, poison_seed));
        must(i % 2 ? bounce->run(size) : send.run(size));
        expect_arrived(size);
    }
}

// On the switch machines the NIC reaches physical addresses: it stages in DMA memory of
// its own function, which it registers (a pin of its own pages), and gives it back.
TEST_F(Paths, BounceOnTheSwitchStagesInTheNicsOwnDmaMemory) {
    const rig::pci::Function& nic = pair_->one.nic->function();
    const std::size_t allocations = nic.dma_allocations(), pins = nic.pins();
    {
        auto path = must(Bounce::open(*pair_, *link_, *buffers_, Mode::SendRecv, {16 * KiB, 2}));
        EXPECT_GT(nic.dma_allocations(), allocations);
        EXPECT_EQ(nic.pins(), pins + 1);
        EXPECT_EQ(path->memory(),
                  "host memory on each machine: the NIC's DMA memory, at physical addresses the GPU reaches too");
    }
    EXPECT_EQ(nic.dma_allocations(), allocations);
    EXPECT_EQ(nic.pins(), pins);
}

// The NIC behind an IOMMU with ACS redirect to an allow-listed root complex: p2p maps the
// GPU's BAR into the NIC's IOMMU domain (counted with its pins, given back with the path),
// and bounce stages in the GPU's host memory, which the NIC only pins.
class IommuPaths : public Paths {
protected:
    Layout layout() const override { return must(builtin("iommu", gpu(), nic_identity())); }
};

TEST_F(IommuPaths, P2pMapsTheGpusBarIntoTheNicsDomainAndMovesExactlyTheBytes) {
    const rig::pci::Function& nic = pair_->one.nic->function();
    const std::size_t pins = nic.pins();
    {
        auto path = must(PeerToPeer::open(*pair_, *link_, *buffers_, Mode::SendRecv, {64 * KiB, 3}));
        EXPECT_EQ(nic.pins(), pins + 1);
        must(path.run(size));
        expect_arrived(size);
    }
    EXPECT_EQ(nic.pins(), pins);
}

// By send/receive, then by machine 2 reading machine 1's host slots (--pull).
TEST_F(IommuPaths, BounceMovesExactlyTheBytesThroughTheGpusHostMemoryPinnedByTheNic) {
    const rig::pci::Function& nic = pair_->two.nic->function();
    const std::size_t allocations = nic.dma_allocations(), pins = nic.pins();
    for (Mode mode : {Mode::SendRecv, Mode::Read}) {
        SCOPED_TRACE(mode == Mode::Read ? "read" : "send/receive");
        must(pair_->two.gpu->fill(buffers_->destination, poison_seed));
        {
            auto path = must(Bounce::open(*pair_, *link_, *buffers_, mode, {4 * KiB, 3}));
            EXPECT_EQ(nic.pins(), pins + 1);
            EXPECT_EQ(
                path->memory(),
                "host memory on each machine: the GPU's pinned host memory (Gpu::host), which the NIC pins again into "
                "its IOMMU domain");
            must(path->run(size));
            expect_arrived(size);
        }
        EXPECT_EQ(nic.pins(), pins);
        EXPECT_EQ(nic.dma_allocations(), allocations);
    }
}

// A machine with the IOMMU on for every device, as Linux sets it up with intel_iommu=on:
// the GPU and the NIC each in an IOMMU group of its own, below one switch. The GPU's host
// memory is at IOVAs of the GPU's domain, and the NIC pins it at IOVAs of its own.
class AllBehindIommuPaths : public Paths {
protected:
    Layout layout() const override {
        rig::sim::Topology t(rig::sim::Cpu::intel(0x8f));
        const auto host = t.host_bridge(0, 0);
        t.add(host, rig::sim::Spec::root_complex(0x8086, 0x09a2));
        const auto upstream = t.add(t.add(host, rig::sim::Spec::root_port(1, 0, 0x8086, 0x352a)),
                                    rig::sim::Spec::upstream_port(0x1000, 0xc030));
        auto gpu_spec = rig::sim::endpoint_spec(0, 0, gpu());
        gpu_spec.iommu_group = 2;
        auto nic_spec = rig::sim::endpoint_spec(0, 0, nic_identity());
        nic_spec.iommu_group = 3;
        const auto gpu_at = t.add(t.add(upstream, rig::sim::Spec::downstream_port(0, 0x1000, 0xc030)), gpu_spec);
        const auto nic_at = t.add(t.add(upstream, rig::sim::Spec::downstream_port(1, 0x1000, 0xc030)), nic_spec);
        std::string gpu_bus = t.bus(gpu_at), nic_bus = t.bus(nic_at);
        return {"all behind an IOMMU", std::move(t), std::move(gpu_bus), std::move(nic_bus)};
    }
};

TEST_F(AllBehindIommuPaths, BounceMovesExactlyTheBytesThroughTheGpusHostMemory) {
    auto path = must(Bounce::open(*pair_, *link_, *buffers_, Mode::SendRecv, {16 * KiB, 4}));
    EXPECT_EQ(
        path->memory(),
        "host memory on each machine: the GPU's pinned host memory (Gpu::host), which the NIC pins again into its "
        "IOMMU domain");
    must(path->run(size));
    expect_arrived(size);
}

TEST_F(Paths, ForwardingExplainsEachMachine) {
    const Forwarding f = forwarding(*pair_);
    EXPECT_TRUE(f.both);
    EXPECT_EQ(f.reason,
              "machine 1: distance switch, forwards (direct below 0000:01:00.0); "
              "machine 2: distance switch, forwards (direct below 0000:01:00.0)");
}

}  // namespace
}  // namespace p2p_copy
