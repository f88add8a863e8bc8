// Reserving the process's addresses (rig/pci/reservation.hpp, Machine::reserve).
#include "rig/pci/reservation.hpp"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <latch>
#include <stdexcept>
#include <thread>
#include <vector>

#include "rig/pci/machine.hpp"
#include "rig/text.hpp"

namespace rig::pci {
namespace {

const std::uint64_t page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));

// An address range nothing maps now, nor is likely to: the middle of a 1 GiB hole the
// kernel chose. Later mappings of this process (a sanitizer's included) are placed at the
// hole's top end, next to the mappings above it, not in its middle.
std::uintptr_t free_range(std::uint64_t pages) {
    constexpr std::uint64_t hole = std::uint64_t{1} << 30;
    if (pages * page > hole / 4) throw std::runtime_error("free_range: too many pages");
    void* p = ::mmap(nullptr, hole, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) throw std::runtime_error("mmap failed");
    ::munmap(p, hole);
    return reinterpret_cast<std::uintptr_t>(p) + hole / 2;
}

TEST(Reserve, SameRangeTwiceSucceeds) {
    const auto base = free_range(4);
    ASSERT_TRUE(reserve_addresses(base, 4 * page));
    ASSERT_TRUE(reserve_addresses(base, 4 * page));
    EXPECT_TRUE(is_reserved(base, 4 * page));
}

TEST(Reserve, RangeOverExistingMappingIsErrorNamingIt) {
    const auto base = free_range(4);
    void* other = ::mmap(reinterpret_cast<void*>(base + 2 * page), page, PROT_READ,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    ASSERT_NE(other, MAP_FAILED);
    const auto r = reserve_addresses(base, 4 * page);
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().find(rig::text::hex(base)), std::string::npos) << r.error();
    EXPECT_NE(r.error().find("in use"), std::string::npos) << r.error();
    // Nothing of the request stays reserved or mapped.
    EXPECT_FALSE(is_reserved(base, page));
    void* again = ::mmap(reinterpret_cast<void*>(base), 2 * page, PROT_NONE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    EXPECT_EQ(again, reinterpret_cast<void*>(base));
    ::munmap(again, 2 * page);
    ::munmap(other, page);
}

TEST(Reserve, RangeHeldInPartReservesTheRest) {
    const auto base = free_range(6);
    ASSERT_TRUE(reserve_addresses(base + page, 2 * page));
    ASSERT_TRUE(reserve_addresses(base, 6 * page));
    EXPECT_TRUE(is_reserved(base, 6 * page));
}

TEST(Reserve, ReservedRangeIsNotGivenToLaterMappings) {
    const auto base = free_range(2);
    ASSERT_TRUE(reserve_addresses(base, 2 * page));
    void* p = ::mmap(reinterpret_cast<void*>(base), page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
                     -1, 0);
    EXPECT_EQ(p, MAP_FAILED);
}

TEST(Reserve, NotWholePagesThrows) {
    const auto base = free_range(1);
    EXPECT_THROW((void)reserve_addresses(base + 1, page), std::invalid_argument);
    EXPECT_THROW((void)reserve_addresses(base, page + 1), std::invalid_argument);
    EXPECT_THROW((void)reserve_addresses(base, 0), std::invalid_argument);
    EXPECT_THROW((void)reserve_addresses(UINTPTR_MAX - page + 1, 2 * page), std::invalid_argument);
}

TEST(Reserve, ThreadsReservingOverlappingRangesAllSucceed) {
    const auto base = free_range(16);
    std::latch start(1);
    std::vector<std::thread> threads;
    std::vector<int> failed(4, 0);
    for (int i = 0; i < 4; ++i)
        threads.emplace_back([&, i] {
            start.wait();
            // Each thread reserves pages [3i, 3i + 6): neighbours overlap.
            if (!reserve_addresses(base + static_cast<std::uint64_t>(i) * 3 * page, 6 * page))
                failed[static_cast<std::size_t>(i)] = 1;
        });
    start.count_down();
    for (auto& t : threads) t.join();
    EXPECT_EQ(failed, (std::vector<int>{0, 0, 0, 0}));
    EXPECT_TRUE(is_reserved(base, 15 * page));
}

TEST(IsReserved, UnreservedOrEmptyRangeIsFalse) {
    const auto base = free_range(3);
    ASSERT_TRUE(reserve_addresses(base, page));
    EXPECT_FALSE(is_reserved(base, 2 * page));
    EXPECT_FALSE(is_reserved(base, 0));
    EXPECT_TRUE(is_reserved(base + 10, 20));
}

TEST(MachineReserve, LocalReservesThisProcess) {
    const auto base = free_range(2);
    const Machine m = Machine::local();
    ASSERT_TRUE(m.reserve(base, 2 * page));
    ASSERT_TRUE(m.reserve(base, 2 * page));
    EXPECT_TRUE(is_reserved(base, 2 * page));
}

TEST(MachineReserve, LocalRangeOverMappingIsError) {
    void* other = ::mmap(nullptr, page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(other, MAP_FAILED);
    const auto r = Machine::local().reserve(reinterpret_cast<std::uintptr_t>(other), page);
    EXPECT_FALSE(r);
    ::munmap(other, page);
}

TEST(MachineReserve, NotPageMultipleThrows) {
    EXPECT_THROW((void)Machine::local().reserve(free_range(1), page / 2), std::invalid_argument);
    EXPECT_THROW((void)Machine::local().reserve(free_range(1) + 8, page), std::invalid_argument);
}

}  // namespace
}  // namespace rig::pci
