// tests/space/model_test.cpp: rig::Space against a simple reference model, thousands of
// seeded random steps (alloc, free, share, release, stale frees) on spaces from 1 byte to
// 2^47 bytes. After every step: each range the space gave is inside the space, aligned
// as the seed says, and overlaps no range the model holds; a failed alloc happened only
// where the model's largest free range was shorter than 2 * (max(n, 16) + a); and the
// space's free ranges are exactly the model's.
#include "rig/space.hpp"
#include "rig/space_testing.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace {

using rig::testing::Range;

// The model: the held ranges, each with how many holds it has.
class Model {
public:
    Model(std::int64_t base, std::int64_t length) : base_(base), length_(length) {}

    std::vector<Range> free_ranges() const {
        std::vector<Range> free;
        std::int64_t at = base_;
        for (const auto& [address, range] : held_) {
            if (address > at) free.push_back({at, address - at});
            at = address + range.bytes;
        }
        if (base_ + length_ > at) free.push_back({at, base_ + length_ - at});
        return free;
    }

    std::int64_t largest_free() const {
        std::int64_t largest = 0;
        for (const Range& range : free_ranges()) largest = std::max(largest, range.bytes);
        return largest;
    }

    // Whether [address, address + bytes) overlaps a held range.
    bool overlaps(std::int64_t address, std::int64_t bytes) const {
        auto above = held_.lower_bound(address);
        if (above != held_.end() && above->first < address + bytes) return true;
        if (above == held_.begin()) return false;
        auto below = std::prev(above);
        return below->first + below->second.bytes > address;
    }

    void take(std::int64_t address, std::int64_t bytes) { held_[address] = {bytes, 1}; }
    void add_hold(std::int64_t address) { ++held_.at(address).holds; }
    void drop_hold(std::int64_t address) {
        if (--held_.at(address).holds == 0) held_.erase(address);
    }

private:
    struct Held {
        std::int64_t bytes;
        int holds;
    };
    std::int64_t base_;
    std::int64_t length_;
    std::map<std::int64_t, Held> held_;
};

struct TestHold {
    rig::Hold hold;
    std::size_t holder;
    std::int64_t address;
    bool live;
};

struct Case {
    std::int64_t base;
    std::int64_t length;
    std::uint64_t seed;
};

std::string describe(const Case& c) {
    return "space [" + std::to_string(c.base) + ", +" + std::to_string(c.length) + "), seed " + std::to_string(c.seed);
}

// n from 1 to the whole space, about evenly over powers of two; the alignment mostly the
// default, sometimes anything from 1 to 2^40.
struct Request {
    std::int64_t n;
    std::int64_t align;
};

Request random_request(std::mt19937_64& random, std::int64_t length) {
    const auto top = static_cast<int>(std::bit_width(static_cast<std::uint64_t>(length)));
    const int power = std::uniform_int_distribution<int>(0, top)(random);
    const std::int64_t low = std::int64_t{1} << std::max(0, power - 1);
    std::int64_t n = std::uniform_int_distribution<std::int64_t>(low, 2 * low)(random);
    n = std::max<std::int64_t>(1, n);
    std::int64_t align = 4096;
    if (std::uniform_int_distribution<int>(0, 1)(random) == 1)
        align = std::int64_t{1} << std::uniform_int_distribution<int>(0, 40)(random);
    return {n, align};
}

void run(const Case& c, int steps) {
    SCOPED_TRACE(describe(c));
    rig::Space space(c.base, c.length);
    Model model(c.base, c.length);
    std::vector<rig::Holder> holders(3);
    std::vector<TestHold> holds;
    std::mt19937_64 random(c.seed);
    auto pick = [&](std::size_t count) { return std::uniform_int_distribution<std::size_t>(0, count - 1)(random); };
    int allocated = 0;
    int refused = 0;

    for (int step = 0; step < steps; ++step) {
        SCOPED_TRACE("step " + std::to_string(step));
        const int what = std::uniform_int_distribution<int>(0, 99)(random);
        if (what < 45 || holds.empty()) {
            const Request request = random_request(random, c.length);
            const std::size_t holder = pick(holders.size());
            const auto a = static_cast<std::int64_t>(std::max(static_cast<std::uint64_t>(request.align),
                                                              std::bit_floor(static_cast<std::uint64_t>(request.n))));
            auto hold = rig::alloc(space, holders[holder], request.n, request.align);
            if (hold) {
                ++allocated;
                const std::int64_t address = rig::address(*hold);
                ASSERT_EQ(address % a, 0) << "n " << request.n << " aligned to " << a;
                ASSERT_GE(address, c.base);
                ASSERT_LE(address, c.base + c.length - request.n);
                ASSERT_FALSE(model.overlaps(address, request.n)) << "at " << address << " n " << request.n;
                model.take(address, request.n);
                holds.push_back({*hold, holder, address, true});
            } else {
                ++refused;
                // largest < 2 * (max(n, 16) + a), halved so that nothing overflows.
                const auto half_needed =
                    static_cast<std::uint64_t>(std::max<std::int64_t>(request.n, 16)) + static_cast<std::uint64_t>(a);
                ASSERT_LT(static_cast<std::uint64_t>(model.largest_free() / 2), half_needed)
                    << "refused n " << request.n << " aligned to " << a << " with " << model.largest_free() << " free";
            }
        } else if (what < 70) {
            TestHold& target = holds[pick(holds.size())];
            rig::free(target.hold);
            if (target.live) model.drop_hold(target.address);
            target.live = false;
        } else if (what < 90) {
            const TestHold target = holds[pick(holds.size())];
            const std::size_t holder = pick(holders.size());
            auto shared = rig::share(holders[holder], target.hold);
            ASSERT_EQ(shared.has_value(), target.live);
            if (shared) {
                ASSERT_EQ(rig::address(*shared), target.address);
                model.add_hold(target.address);
                holds.push_back({*shared, holder, target.address, true});
            }
        } else {
            const std::size_t holder = pick(holders.size());
            rig::release(holders[holder]);
            for (TestHold& held : holds) {
                if (held.holder != holder || !held.live) continue;
                model.drop_hold(held.address);
                held.live = false;
            }
        }
        ASSERT_EQ(rig::testing::free_ranges(space), model.free_ranges());
        if (holds.size() > 512) std::erase_if(holds, [](const TestHold& held) { return !held.live; });
    }
    for (rig::Holder& holder : holders) rig::release(holder);
    const std::vector<Range> whole = c.length == 0 ? std::vector<Range>{} : std::vector<Range>{{c.base, c.length}};
    EXPECT_EQ(rig::testing::free_ranges(space), whole);
    // The run exercised both outcomes where the space allows both.
    if (c.length >= 4096) {
        EXPECT_GT(allocated, steps / 10);
        EXPECT_GT(refused, 0);
    }
}

TEST(SpaceModel, TinySpacesMatchTheModel) {
    for (const Case c : {Case{0, 1, 1}, Case{5, 17, 2}, Case{4095, 40, 3}, Case{0, 0, 4}}) run(c, 2000);
}

TEST(SpaceModel, PageSizedSpacesMatchTheModel) {
    for (const Case c : {Case{0, 64 * 1024, 11}, Case{12345, 1 << 20, 12}, Case{1 << 21, 3 << 20, 13}}) run(c, 4000);
}

TEST(SpaceModel, HugeSpacesMatchTheModel) {
    constexpr std::int64_t two47 = std::int64_t{1} << 47;
    for (const Case c : {Case{0, two47, 21}, Case{std::int64_t{1} << 44, two47, 22}, Case{3, two47 - 3, 23}})
        run(c, 4000);
}

}  // namespace
