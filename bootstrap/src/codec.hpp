// The JSON of each message (peer.hpp lists them): one encoder and one checking decoder.
#pragma once

#include <string>
#include <string_view>

#include "rig/bootstrap/messages.hpp"
#include "rig/result.hpp"

namespace rig::bootstrap::codec {

// The payload of `message`: one JSON object, compact.
std::string encode(const Message& message);

// The message in `payload`, which must be of type `expected` unless that is null. The
// Error says what is wrong without naming the peer (the caller puts its address first):
// "sent \"path\" where \"hello\" was expected", "the \"queue_pair\" message has no field
// \"qpn\"".
Result<Message> decode(std::string_view payload, const char* expected);

}  // namespace rig::bootstrap::codec
