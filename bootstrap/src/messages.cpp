// Names of rig's bootstrap messages and their values, and the comparison of two jobs
// (messages.hpp).
#include "rig/bootstrap/messages.hpp"

namespace rig::bootstrap {

const char* type_name(const Message& message) {
    static constexpr const char* names[] = {"hello",  "queue_pair", "path",    "ready",
                                            "staged", "consumed",   "outcome", "error"};
    static_assert(std::size(names) == std::variant_size_v<Message>);
    return names[message.index()];
}

std::string_view to_string(Role role) { return role == Role::Sender ? "sender" : "receiver"; }
std::string_view to_string(Path path) { return path == Path::P2p ? "p2p" : "bounce"; }
std::string_view to_string(Mode mode) { return mode == Mode::SendRecv ? "send" : "read"; }
std::string_view to_string(Choice choice) {
    switch (choice) {
    case Choice::Both: return "both";
    case Choice::Auto: return "auto";
    case Choice::P2p: return "p2p";
    case Choice::Bounce: return "bounce";
    }
    return "?";
}

std::string differences(const Job& here, const Job& there) {
    std::string out;
    auto differ = [&](const char* field, const auto& a, const auto& b) {
        if (a == b) return;
        std::string x, y;
        if constexpr (std::is_arithmetic_v<std::decay_t<decltype(a)>>) {
            x = std::to_string(a);
            y = std::to_string(b);
        } else {
            x = std::string(to_string(a));
            y = std::string(to_string(b));
        }
        out += (out.empty() ? "" : "; ") + std::string(field) + " " + x + " here, " + y + " there";
    };
    differ("size", here.size, there.size);
    differ("chunk", here.chunk, there.chunk);
    differ("depth", here.depth, there.depth);
    differ("mode", here.mode, there.mode);
    differ("choice", here.choice, there.choice);
    return out;
}

}  // namespace rig::bootstrap
