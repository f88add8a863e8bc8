// tests/space/threads_test.cpp: rig::Space's operations from several threads at once
// (run them under the tsan preset too). Threads start together on a std::latch; nothing
// sleeps. Each test checks what the interleaving may not change: no range is given twice,
// a share racing a release either holds the range or holds nothing, and in the end every
// range is back.
#include "rig/space.hpp"
#include "rig/space_testing.hpp"

#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <latch>
#include <memory>
#include <optional>
#include <random>
#include <thread>
#include <vector>

namespace {

using rig::testing::free_ranges;
using rig::testing::Range;

constexpr std::int64_t KiB = 1024;
constexpr std::int64_t MiB = 1024 * KiB;

TEST(SpaceThreads, ShareRacingReleaseEitherHoldsTheRangeOrNothing) {
    rig::Space space(0, MiB);
    int shared_count = 0;
    int refused_count = 0;
    for (int round = 0; round < 500; ++round) {
        rig::Holder first;
        rig::Holder second;
        auto hold = rig::alloc(space, first, 64 * KiB);
        ASSERT_TRUE(hold);
        std::optional<rig::Hold> shared;
        std::latch start(2);
        std::thread releaser([&] {
            start.arrive_and_wait();
            rig::release(first);
        });
        std::thread sharer([&] {
            start.arrive_and_wait();
            shared = rig::share(second, *hold);
        });
        releaser.join();
        sharer.join();
        if (shared) {
            ++shared_count;
            ASSERT_EQ(rig::address(*shared), rig::address(*hold));
            // first's hold is gone, second's keeps the range.
            ASSERT_EQ(free_ranges(space), (std::vector<Range>{{64 * KiB, MiB - 64 * KiB}}));
            rig::free(*shared);
        } else {
            ++refused_count;
        }
        ASSERT_EQ(free_ranges(space), (std::vector<Range>{{0, MiB}}));
        rig::release(second);  // holds nothing either way
        ASSERT_EQ(free_ranges(space), (std::vector<Range>{{0, MiB}}));
    }
    EXPECT_EQ(shared_count + refused_count, 500);
}

// Every 4 KiB page of the space has an owner slot; a thread claims the pages of each range
// it is given and clears them before it frees the range. A claim finding a page owned is a
// range given twice.
TEST(SpaceThreads, ConcurrentAllocAndFreeNeverGiveARangeTwice) {
    constexpr std::int64_t length = 4 * MiB;
    constexpr int threads = 2;
    constexpr int steps = 3000;
    rig::Space space(0, length);
    std::vector<std::atomic<int>> owner(length / (4 * KiB));
    std::atomic<int> given_twice{0};
    std::latch start(threads);
    auto work = [&](int me) {
        rig::Holder holder;
        std::mt19937 random(static_cast<unsigned>(me) + 1);
        std::vector<std::pair<rig::Hold, std::int64_t>> mine;
        start.arrive_and_wait();
        for (int step = 0; step < steps; ++step) {
            if (mine.size() < 16 && (mine.empty() || random() % 2 == 0)) {
                const std::int64_t bytes = (4 * KiB) << (random() % 6);  // 4 KiB .. 128 KiB
                auto hold = rig::alloc(space, holder, bytes);
                if (!hold) continue;
                for (std::int64_t page = rig::address(*hold) / (4 * KiB);
                     page < (rig::address(*hold) + bytes) / (4 * KiB); ++page) {
                    int expected = 0;
                    if (!owner[page].compare_exchange_strong(expected, me + 1)) ++given_twice;
                }
                mine.emplace_back(*hold, bytes);
            } else {
                const std::size_t i = random() % mine.size();
                const auto [hold, bytes] = mine[i];
                for (std::int64_t page = rig::address(hold) / (4 * KiB);
                     page < (rig::address(hold) + bytes) / (4 * KiB); ++page)
                    owner[page].store(0);
                rig::free(hold);
                mine.erase(mine.begin() + static_cast<std::ptrdiff_t>(i));
            }
        }
        for (const auto& [hold, bytes] : mine) {
            for (std::int64_t page = rig::address(hold) / (4 * KiB); page < (rig::address(hold) + bytes) / (4 * KiB);
                 ++page)
                owner[page].store(0);
        }
        rig::release(holder);
    };
    std::vector<std::thread> running;
    for (int me = 0; me < threads; ++me) running.emplace_back(work, me);
    for (std::thread& thread : running) thread.join();
    EXPECT_EQ(given_twice.load(), 0);
    EXPECT_EQ(free_ranges(space), (std::vector<Range>{{0, length}}));
}

TEST(SpaceThreads, TwoReleasesOfOneHolderGiveBackEachHoldOnce) {
    rig::Space space(0, 64 * MiB);
    rig::Holder holder;
    rig::Holder other;
    for (int i = 0; i < 1000; ++i) ASSERT_TRUE(rig::alloc(space, holder, 4 * KiB));
    auto kept = rig::alloc(space, other, 4 * KiB);
    ASSERT_TRUE(kept);
    std::latch start(2);
    auto releasing = [&] {
        start.arrive_and_wait();
        rig::release(holder);
    };
    std::thread one(releasing);
    std::thread two(releasing);
    one.join();
    two.join();
    EXPECT_EQ(free_ranges(space),
              (std::vector<Range>{{0, rig::address(*kept)},
                                  {rig::address(*kept) + 4 * KiB, 64 * MiB - rig::address(*kept) - 4 * KiB}}));
    rig::free(*kept);
    EXPECT_EQ(free_ranges(space), (std::vector<Range>{{0, 64 * MiB}}));
}

TEST(SpaceThreads, HoldersSharingOneRangeOnManyThreadsGiveItBackOnce) {
    rig::Space space(0, MiB);
    rig::Holder first;
    auto hold = rig::alloc(space, first, 64 * KiB);
    ASSERT_TRUE(hold);
    constexpr int threads = 4;
    std::latch start(threads + 1);
    std::atomic<int> shared{0};
    std::vector<std::thread> running;
    for (int i = 0; i < threads; ++i) {
        running.emplace_back([&] {
            rig::Holder mine;
            start.arrive_and_wait();
            for (int round = 0; round < 200; ++round) {
                auto copy = rig::share(mine, *hold);
                if (copy) ++shared;
                if (copy) rig::free(*copy);
            }
        });
    }
    start.arrive_and_wait();
    rig::free(*hold);  // while the others share and free: from here shares may fail
    for (std::thread& thread : running) thread.join();
    EXPECT_LE(shared.load(), threads * 200);
    EXPECT_EQ(free_ranges(space), (std::vector<Range>{{0, MiB}}));
}

TEST(SpaceThreads, SpaceGoingAwayWhileHoldsAreFreedElsewhereIsSafe) {
    for (int round = 0; round < 200; ++round) {
        auto space = std::make_unique<rig::Space>(0, MiB);
        rig::Holder holder;
        std::vector<rig::Hold> holds;
        for (int i = 0; i < 8; ++i) holds.push_back(*rig::alloc(*space, holder, 4 * KiB));
        std::latch start(2);
        std::thread freeing([&] {
            start.arrive_and_wait();
            for (const rig::Hold& hold : holds) rig::free(hold);
        });
        start.arrive_and_wait();
        space.reset();
        freeing.join();
        for (const rig::Hold& hold : holds) EXPECT_FALSE(rig::share(holder, hold));
    }
}

TEST(SpaceThreads, AllocatingFromManySpacesAndOneHolderIsSafe) {
    constexpr int threads = 3;
    std::array<std::unique_ptr<rig::Space>, threads> spaces;
    for (int i = 0; i < threads; ++i) spaces[i] = std::make_unique<rig::Space>(std::int64_t{i} << 30, MiB);
    rig::Holder holder;  // one holder joining three spaces at once
    std::latch start(threads);
    std::vector<std::thread> running;
    for (int i = 0; i < threads; ++i) {
        running.emplace_back([&, i] {
            start.arrive_and_wait();
            for (int k = 0; k < 100; ++k) ASSERT_TRUE(rig::alloc(*spaces[i], holder, 4 * KiB));
        });
    }
    for (std::thread& thread : running) thread.join();
    for (int i = 0; i < threads; ++i)
        EXPECT_EQ(free_ranges(*spaces[i]),
                  (std::vector<Range>{{(std::int64_t{i} << 30) + 400 * KiB, MiB - 400 * KiB}}));
    rig::release(holder);
    for (int i = 0; i < threads; ++i)
        EXPECT_EQ(free_ranges(*spaces[i]), (std::vector<Range>{{std::int64_t{i} << 30, MiB}}));
}

}  // namespace
