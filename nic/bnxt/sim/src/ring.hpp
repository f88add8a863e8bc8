// ring.hpp: ring position arithmetic of the bnxt model, the one place it lives.
//
// A position is an index in [0, size) with its wrap parity, the `epoch` of §5.8.2: 0 on
// the first pass, flipped each time the index wraps to 0. Taken together they count
// modulo 2 x size, so two positions on one ring are ordered without ambiguity as long as
// they lie less than 2 x size apart. The valid/phase/toggle bit a producer writes (§0)
// starts at 1: it is the inverse of the epoch of the slot written.
//
// Doorbell rules (§5.8.2, §5.8.5; B21):
//  - a producer doorbell (SQ, RQ) with position p is taken iff the consumer c, the last
//    producer q and p satisfy  ahead(c, q) <= ahead(c, p) <= size: never backwards, never
//    more than one ring ahead of what the device has not consumed;
//  - a consumer doorbell (CQ, CQ_ARM*, NQ, NQ_ARM) with position p is taken iff
//    ahead(c, p) <= ahead(c, q), where c is the last consumer and q the producer: the
//    consumer never passes what was produced and never moves back.
// Any other doorbell is stale or carries a wrong epoch: hardware drops it.
#pragma once

#include <cstdint>

namespace rig::bnxt::sim::detail {

struct Position {
    std::uint32_t index = 0;
    std::uint32_t epoch = 0;  // wrap parity, 0 or 1
    friend bool operator==(const Position&, const Position&) = default;
};

// The position as a count modulo 2 x size.
constexpr std::uint64_t linear(Position p, std::uint32_t size) { return std::uint64_t{p.epoch} * size + p.index; }

// How many entries `to` lies ahead of `from`, in [0, 2 x size).
constexpr std::uint64_t ahead(Position from, Position to, std::uint32_t size) {
    const std::uint64_t cycle = 2 * std::uint64_t{size};
    return (linear(to, size) + cycle - linear(from, size)) % cycle;
}

// `n` entries after p.
constexpr Position advance(Position p, std::uint32_t size, std::uint64_t n = 1) {
    const std::uint64_t cycle = 2 * std::uint64_t{size};
    const std::uint64_t l = (linear(p, size) + n) % cycle;
    return Position{static_cast<std::uint32_t>(l % size), static_cast<std::uint32_t>(l / size)};
}

// The valid/toggle bit of an entry written at p (§0: 1 on the first pass).
constexpr std::uint8_t phase(Position p) { return p.epoch == 0 ? 1 : 0; }

// Doorbell acceptance, as the file comment states.
constexpr bool producer_doorbell_ok(Position consumer, Position producer, Position doorbell, std::uint32_t size) {
    const std::uint64_t to_doorbell = ahead(consumer, doorbell, size);
    return to_doorbell <= size && to_doorbell >= ahead(consumer, producer, size);
}
constexpr bool consumer_doorbell_ok(Position consumer, Position producer, Position doorbell, std::uint32_t size) {
    return ahead(consumer, doorbell, size) <= ahead(consumer, producer, size);
}

static_assert(advance({63, 0}, 64) == Position{0, 1});
static_assert(advance({63, 1}, 64) == Position{0, 0});
static_assert(advance({0, 0}, 65, 129) == Position{64, 1});
static_assert(ahead({60, 0}, {6, 1}, 64) == 10);
static_assert(ahead({60, 0}, {6, 0}, 64) == 74);
static_assert(phase({0, 0}) == 1 && phase({0, 1}) == 0);
// B21 (MORI): the epoch never flips after the first wrap -> a doorbell 74 ahead -> dropped.
static_assert(!producer_doorbell_ok({60, 0}, {60, 0}, {6, 0}, 64));
static_assert(producer_doorbell_ok({60, 0}, {60, 0}, {6, 1}, 64));
static_assert(producer_doorbell_ok({0, 0}, {0, 0}, {0, 1}, 64));    // a full ring
static_assert(!producer_doorbell_ok({0, 0}, {10, 0}, {5, 0}, 64));  // backwards
static_assert(consumer_doorbell_ok({10, 0}, {20, 0}, {20, 0}, 64));
static_assert(!consumer_doorbell_ok({10, 0}, {20, 0}, {21, 0}, 64));
static_assert(!consumer_doorbell_ok({10, 0}, {20, 0}, {15, 1}, 64));

}  // namespace rig::bnxt::sim::detail
