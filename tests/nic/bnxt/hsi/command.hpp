// tests/nic/bnxt/hsi/command.hpp: the 16-byte command header (docs/hsi.md §4.4) a
// command test starts from, and the bytes the spec's table gives for it.
#pragma once

#include "bytes.hpp"
#include "rig/bnxt/hsi/rcfw.hpp"

namespace rig::bnxt::hsi::test {

inline CmdqBase base(Opcode op, std::size_t bytes) {
    CmdqBase h{};
    h.opcode = static_cast<std::uint8_t>(op);
    h.cmd_size = static_cast<std::uint8_t>((bytes + 15) / 16);
    h.cookie = 0x8005;
    return h;
}

// §4.4: opcode @0, cmd_size @1, flags @2, cookie @4, resp_size @6, reserved @7, resp_addr @8.
inline Bytes base_bytes(std::size_t n, std::uint8_t opcode) {
    Bytes b(n);
    b.put(0, 1, opcode).put(1, 1, (n + 15) / 16).put(4, 2, 0x8005);
    return b;
}

}  // namespace rig::bnxt::hsi::test
