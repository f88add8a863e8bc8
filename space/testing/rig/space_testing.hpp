// rig/space_testing.hpp: test-only seams of rig::Space. Library code and programs do not
// include this header (only the rig_space_testing target puts it on the include path).
//
// A test injects faults into one space of its own through make_space, with no global
// state and no link-time tricks, and looks at the space's free ranges to check its books.
#pragma once

#include "rig/space.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

namespace rig::testing {

// The points of a space's work where a fault may strike.
enum class SpaceStep {
    allocate,   // the space (or a holder's record of it) is about to take heap memory
    took,       // alloc or share has just given the holder its new hold
    gave_back,  // release has just given back one hold
};

// Called at each step, on the thread doing the work, outside the space's lock. Throwing
// from it (std::bad_alloc, say) ends the call there, as an exception at that point
// would. It must be safe to call from the threads the test uses.
using SpaceFaults = std::function<void(SpaceStep)>;

// A Space like Space(base, bytes) whose work goes through `faults`.
std::unique_ptr<Space> make_space(std::int64_t base, std::int64_t bytes, SpaceFaults faults);

struct Range {
    std::int64_t address;
    std::int64_t bytes;
    friend bool operator==(const Range&, const Range&) = default;
};

// The space's free ranges in address order, each as long as it can be (two free ranges
// are never neighbours). Walks every range: for tests only.
std::vector<Range> free_ranges(const Space& space);

}  // namespace rig::testing
