// The HIP backend (rig/gpu/hip.hpp): the contract on the machine's AMD GPUs (skipped
// where it has none), the clean Error of a machine without the amdgpu/KFD driver, the
// BAR check, runs from the page map or the Error that says why not, and the dma-buf of a
// sub-range, which is the whole BO with the range's offset in it (case B13).
#include "rig/gpu/hip.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <vector>

#include "contract.hpp"
#include "rig/space.hpp"
#include "rig/text.hpp"

namespace rig::gpu::test {
namespace {

constexpr std::uint64_t MiB = 1024 * 1024, GiB = 1024 * MiB, TiB = 1024 * GiB;

// The AMD Space of these tests: 4 TiB from 96 TiB on, inside the low half of a GFX9+
// GPU virtual address space (48 bits).
std::shared_ptr<Space> amd_space() {
    return std::make_shared<Space>(std::int64_t{0x6000'0000'0000}, std::int64_t(4 * TiB));
}

Gpu open_or_skip(int index, std::shared_ptr<Space> space) {
    const auto n = hip::count();
    if (!n) skip(n.error());
    if (index >= *n) skip("needs " + std::to_string(index + 1) + " AMD GPUs, found " + std::to_string(*n));
    auto gpu = hip::open(index, std::move(space));
    if (!gpu) throw std::runtime_error(gpu.error());
    return *gpu;
}

// Whether this process reads frame numbers from its page map (CAP_SYS_ADMIN).
bool frames_visible() {
    static int probe = 1;  // a touched page of the process
    const int map = ::open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    if (map < 0) return false;
    std::uint64_t entry = 0;
    const auto at = static_cast<off_t>(reinterpret_cast<std::uintptr_t>(&probe) / 4096 * sizeof entry);
    const bool read = ::pread(map, &entry, sizeof entry, at) == static_cast<ssize_t>(sizeof entry);
    ::close(map);
    return read && (entry & ((std::uint64_t{1} << 55) - 1)) != 0;
}

class HipPlatform final : public Platform {
public:
    std::shared_ptr<Space> space() override { return amd_space(); }
    Gpu gpu(int index, std::shared_ptr<Space> space) override { return open_or_skip(index, std::move(space)); }
    HostBuffer host(const Gpu&, std::uint64_t bytes) override { return process_.host(bytes); }
    std::uint64_t too_large(const Gpu&) override { return 1 * TiB; }
    bool publishes_runs() const override { return frames_visible(); }

private:
    ProcessMemory process_;
};

INSTANTIATE_TEST_SUITE_P(Hip, Contract,
                         ::testing::Values(Backend{"hip", [] { return std::make_unique<HipPlatform>(); }}));

TEST(Hip, NoDriverGivesACleanError) {
    const auto n = hip::count();
    if (n) skip("this machine has the AMD GPU driver");
    EXPECT_EQ(n.error().rfind("HIP: no AMD GPU driver: /dev/kfd is missing", 0), 0u) << n.error();
    const auto gpu = hip::open(0, amd_space());
    ASSERT_FALSE(gpu);
    EXPECT_EQ(gpu.error(), n.error());
}

TEST(Hip, AllocBeyondTheBarNamesTheBarsSize) {
    const Gpu g = open_or_skip(0, amd_space());
    const auto m = g.alloc(1 * TiB);
    ASSERT_FALSE(m);
    EXPECT_NE(m.error().find("the BAR reaches "), std::string::npos) << m.error();
    EXPECT_NE(m.error().find("1 TiB"), std::string::npos) << m.error();
}

TEST(Hip, RunsWithoutCapSysAdminSayWhy) {
    if (frames_visible()) skip("this process reads frame numbers");
    const Gpu g = open_or_skip(0, amd_space());
    const auto m = g.alloc(2 * MiB);
    ASSERT_TRUE(m) << m.error();
    const auto runs = m->runs();
    ASSERT_FALSE(runs);
    EXPECT_NE(runs.error().find("CAP_SYS_ADMIN"), std::string::npos) << runs.error();
    EXPECT_NE(runs.error().find("dmabuf"), std::string::npos) << runs.error();
}

TEST(Hip, DmabufOfASubRangeIsTheWholeBoWithTheRangesOffset) {
    const Gpu g = open_or_skip(0, amd_space());
    const auto m = g.alloc(64 * MiB);
    ASSERT_TRUE(m) << m.error();
    const auto buf = m->dmabuf(1 * MiB + 0x123, 1000);
    ASSERT_TRUE(buf) << buf.error();
    EXPECT_EQ(buf->bytes(), 64 * MiB);
    EXPECT_EQ(buf->offset(), 1 * MiB + 0x123);
    EXPECT_EQ(::lseek(buf->fd(), 0, SEEK_END), static_cast<off_t>(64 * MiB));
}

}  // namespace
}  // namespace rig::gpu::test
