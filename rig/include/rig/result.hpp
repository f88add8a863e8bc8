// rig/result.hpp: how rig reports what can fail at run time.
//
// A runtime failure is a `rig::Result<T>` holding a message that names the thing and
// what failed, in the device's own words ("0000:41:00.0: the firmware refused
// REGISTER_MR (status 4)"). A caller adds its context in front: `"BAR2: " + r.error()`.
// Misuse by the caller is not a Result: it throws std::invalid_argument.
// GCC 12's std::expected has no and_then/transform; write the early return out.
#pragma once

#include <expected>
#include <string>

namespace rig {

template <class T>
using Result = std::expected<T, std::string>;

// The unexpected value of any Result: `return rig::fail(bus, ": no such function");`
template <class... Parts>
std::unexpected<std::string> fail(const Parts&... parts) {
    std::string message;
    (message += ... += parts);
    return std::unexpected<std::string>(std::move(message));
}

}  // namespace rig
