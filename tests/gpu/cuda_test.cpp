// The CUDA backend (rig/gpu/cuda.hpp): the contract on the machine's NVIDIA GPUs (skipped
// where it has none), the clean Error of a machine without NVIDIA's driver, the refusal of
// a Space address the process already uses, and the dma-buf of a sub-range.
#include "rig/gpu/cuda.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <vector>

#include "contract.hpp"
#include "rig/gpu/reference.hpp"
#include "rig/space.hpp"
#include "rig/text.hpp"

namespace rig::gpu::test {
namespace {

constexpr std::uint64_t MiB = 1024 * 1024, GiB = 1024 * MiB, TiB = 1024 * GiB;

// The NVIDIA Space of these tests: 4 TiB from 96 TiB on, below where Linux places mmaps
// on x86-64 (just under 128 TiB) and above the heap.
std::shared_ptr<Space> nvidia_space() {
    return std::make_shared<Space>(std::int64_t{0x6000'0000'0000}, std::int64_t(4 * TiB));
}

Gpu open_or_skip(int index, std::shared_ptr<Space> space) {
    const auto n = cuda::count();
    if (!n) skip(n.error());
    if (index >= *n) skip("needs " + std::to_string(index + 1) + " CUDA GPUs, found " + std::to_string(*n));
    auto gpu = cuda::open(index, std::move(space));
    if (!gpu) throw std::runtime_error(gpu.error());
    return *gpu;
}

class CudaPlatform final : public Platform {
public:
    std::shared_ptr<Space> space() override { return nvidia_space(); }
    Gpu gpu(int index, std::shared_ptr<Space> space) override { return open_or_skip(index, std::move(space)); }
    HostBuffer host(const Gpu&, std::uint64_t bytes) override { return process_.host(bytes); }
    std::uint64_t too_large(const Gpu&) override { return 1 * TiB; }  // more than any GPU has (H200: 141 GB)
    bool publishes_runs() const override { return false; }

private:
    ProcessMemory process_;
};

INSTANTIATE_TEST_SUITE_P(Cuda, Contract,
                         ::testing::Values(Backend{"cuda", [] { return std::make_unique<CudaPlatform>(); }}));

TEST(Cuda, NoDriverGivesACleanErrorNotALoaderFailure) {
    const auto n = cuda::count();
    if (n) skip("this machine has NVIDIA's driver");
    EXPECT_EQ(n.error().rfind("CUDA: no NVIDIA driver: ", 0), 0u) << n.error();
    const auto gpu = cuda::open(0, nvidia_space());
    ASSERT_FALSE(gpu);
    EXPECT_EQ(gpu.error(), n.error());
}

TEST(Cuda, OpenOfAMissingGpuNamesIt) {
    const auto n = cuda::count();
    if (!n) skip(n.error());
    const auto gpu = cuda::open(*n, nvidia_space());
    ASSERT_FALSE(gpu);
    EXPECT_NE(gpu.error().find("no GPU " + std::to_string(*n)), std::string::npos) << gpu.error();
}

TEST(Cuda, ASpaceAddressTheProcessUsesIsRefused) {
    // A Space over 8 MiB the process has mapped: CUDA cannot reserve there, so it places
    // the reservation elsewhere (or fails), and alloc refuses, naming the Space address.
    void* taken = ::mmap(nullptr, 10 * MiB, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    ASSERT_NE(taken, MAP_FAILED);
    const auto aligned = (reinterpret_cast<std::uintptr_t>(taken) + 2 * MiB - 1) / (2 * MiB) * (2 * MiB);
    auto space = std::make_shared<Space>(static_cast<std::int64_t>(aligned), std::int64_t(8 * MiB));
    const auto n = cuda::count();
    if (!n || *n == 0) {
        ::munmap(taken, 10 * MiB);
        skip("no CUDA GPU");
    }
    const Gpu g = open_or_skip(0, space);
    const auto m = g.alloc(2 * MiB);
    ::munmap(taken, 10 * MiB);
    ASSERT_FALSE(m);
    EXPECT_NE(m.error().find("Space address 0x"), std::string::npos) << m.error();
    EXPECT_NE(m.error().find(g.bus()), std::string::npos) << m.error();
    EXPECT_NE(m.error().find("2 MiB"), std::string::npos) << m.error();
}

TEST(Cuda, RunsPointToTheDmabuf) {
    const Gpu g = open_or_skip(0, nvidia_space());
    const auto m = g.alloc(2 * MiB);
    ASSERT_TRUE(m) << m.error();
    const auto runs = m->runs();
    ASSERT_FALSE(runs);
    EXPECT_NE(runs.error().find("dmabuf"), std::string::npos) << runs.error();
}

TEST(Cuda, PointerIsTheSpaceAddressOnTheGpusOrdinal) {
    // What DLPack exports (kDLCUDA, the device ordinal): unified addressing makes the Space
    // address the device pointer.
    const Gpu g = open_or_skip(0, nvidia_space());
    const auto m = g.alloc(2 * MiB);
    ASSERT_TRUE(m) << m.error();
    const auto p = m->pointer();
    ASSERT_TRUE(p) << p.error();
    EXPECT_EQ(p->device, Pointer::Device::Cuda);
    EXPECT_EQ(p->ordinal, 0);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p->data), static_cast<std::uintptr_t>(m->address()));
}

TEST(Cuda, DmabufOfASubRangeCoversItsPagesOnly) {
    const Gpu g = open_or_skip(0, nvidia_space());
    const auto m = g.alloc(64 * MiB);
    ASSERT_TRUE(m) << m.error();
    const auto buf = m->dmabuf(1 * MiB + 0x123, 1000);
    if (!buf) {
        // Drivers without dma-buf through BAR1 (proprietary module, old kernel) refuse it.
        EXPECT_NE(buf.error().find(g.bus()), std::string::npos) << buf.error();
        EXPECT_NE(buf.error().find("dma-buf"), std::string::npos) << buf.error();
        return;
    }
    EXPECT_GE(buf->fd(), 0);
    EXPECT_EQ(buf->bytes(), 4096u);
    EXPECT_EQ(buf->offset(), 0x123u);
    EXPECT_EQ(::lseek(buf->fd(), 0, SEEK_END), 4096);  // a dma-buf's size
}

TEST(Cuda, OneGibUploadChecksumDownload) {
    // The transfer size of the main job's checks, end to end: 1 GiB of the host's fill
    // pattern uploaded, checksummed on the GPU, filled on the GPU with another seed and
    // downloaded (gpu/cuda/device-check.sh runs this on a GPU machine).
    const Gpu g = open_or_skip(0, nvidia_space());
    const auto m = g.alloc(1 * GiB);
    ASSERT_TRUE(m) << m.error();
    std::vector<std::byte> bytes(1 * GiB);
    reference::fill(bytes, 1);
    ASSERT_TRUE(g.upload(*m, 0, bytes));
    const auto sum = g.checksum(*m);
    ASSERT_TRUE(sum) << sum.error();
    EXPECT_EQ(*sum, reference::checksum(bytes));
    ASSERT_TRUE(g.fill(*m, 2));
    ASSERT_TRUE(g.download(*m, 0, bytes));
    EXPECT_EQ(reference::checksum(bytes), reference::fill_checksum(2, 1 * GiB));
}

}  // namespace
}  // namespace rig::gpu::test
