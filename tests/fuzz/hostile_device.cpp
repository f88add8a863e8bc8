// libFuzzer harness: a hostile device under the bnxt driver. The model (stepped on this
// thread, so an input always runs the same way) corrupts what it writes and answers
// (testing::Faults::tamper): HWRM responses, RCFW side buffers, CREQ and NQ entries, CQEs
// and BAR0 register reads. Each 4 bytes of the input is one corruption: the kind, which
// write of that kind (0..255), the byte in it and the value XORed into it. Nic::open must
// give a Nic or an Error, never crash, throw or hang (every command is bounded by a short
// timeout); an opened Nic then makes a Cq, a Qp, a region and a connected loopback of two
// queue pairs, sends on it and polls, and closes, whatever the device says.
#include <algorithm>
#include <array>
#include <stdexcept>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "../nic/bnxt/nic_machine.hpp"

namespace {

using namespace rig::bnxt;
using namespace rig::bnxt::test;
using sim::testing::Written;

struct Corruption {
    Written what;
    std::uint8_t nth;
    std::uint8_t at;
    std::uint8_t value;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size > 4 * 64) return -1;
    std::vector<Corruption> plan;
    for (std::size_t i = 0; i + 4 <= size; i += 4)
        plan.push_back({static_cast<Written>(data[i] % 6), data[i + 1], data[i + 2], data[i + 3]});

    SimMachine m("hostile", Iommu::Off, 1, Thread::Stepped);
    std::array<unsigned, 6> seen{};
    m.faults.tamper([&plan, &seen](Written what, std::span<std::byte> bytes) {
        const unsigned n = seen[static_cast<std::size_t>(what)]++;
        for (const Corruption& c : plan)
            if (c.what == what && c.nth == n && !bytes.empty())
                bytes[c.at % bytes.size()] ^= static_cast<std::byte>(c.value);
    });
    Options o = stepped_options(m);
    o.command_timeout = std::chrono::milliseconds(50);
    auto nic = m.open(o);
    if (!nic) return 0;  // refused, with an Error: what a driver should do
    // A careful caller: depths within the limits the (hostile) firmware reported; what
    // the driver documents as a caller's mistake (std::invalid_argument) is such a caller's
    // to avoid, so the rules it cannot know in advance end the run, not the fuzzer.
    const Limits limits = nic->limits();
    const std::uint32_t depth = std::min<std::uint32_t>(4, limits.max_qp_wr - 1);
    try {
        auto cq = Cq::create(*nic, std::min<std::uint32_t>(4 * depth, limits.max_cqe - 1));
        if (cq) {
            auto a = Qp::create(*nic, *cq, *cq, {depth, depth});
            auto b = Qp::create(*nic, *cq, *cq, {depth, depth});
            auto region = Region::host(*nic, 8192);
            if (a && b && region && a->connect(b->endpoint()) && b->connect(a->endpoint())) {
                if (b->post(Recv{.region = &*region, .offset = 4096, .bytes = 4096, .id = 2}) &&
                    a->post(Send{.region = &*region, .bytes = 100, .id = 1})) {
                    std::array<Completion, 4> out;
                    for (int round = 0; round < 10; ++round)
                        if (auto got = cq->wait(out, std::chrono::milliseconds(5)); !got) break;
                }
            }
        }
    } catch (const std::invalid_argument&) {}
    (void)nic->close();
    return 0;
}
