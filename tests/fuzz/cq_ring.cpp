// libFuzzer harness: CQEs a broken or hostile device writes into a CQ ring (rig/bnxt/cq.hpp,
// rig/bnxt/hsi/cqe.hpp; Linux's roce_hsi.h cq_req, cq_res_rc, cq_terminal). Two simulated NICs
// on a Wire, stepped on this thread (the same input, the same run). For each input: a Cq and a
// Qp on each NIC, connected; two receives posted on B, two SENDs and a READ on A; the model's
// next CQEs (testing::Faults::rewrite_cqes) overwritten or XORed with the input's 32-byte
// chunks, A's first, then B's.
// The driver must never crash, never report a completion of a work request it was not
// given or report one twice, and either complete everything or say the Cq is in error;
// then everything is destroyed, whatever state it is in.
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <set>

#include "../nic/bnxt/nic_machine.hpp"

namespace {

using namespace rig::bnxt;
using namespace rig::bnxt::test;

struct World {
    SimMachine a{"a", Iommu::Off, 1, Thread::Stepped};
    SimMachine b{"b", Iommu::Off, 2, Thread::Stepped};
    sim::Wire wire{*a.model, *b.model};
    std::optional<Nic> na, nb;
    std::optional<Region> ra, rb;
    World() {
        Options o;
        o.clock = std::make_shared<SteppingClock>(std::vector<sim::Model*>{a.model.get(), b.model.get()});
        o.interrupts = Interrupts::Poll;
        o.command_timeout = std::chrono::milliseconds(200);
        auto x = a.open(o), y = b.open(o);
        if (!x || !y) __builtin_trap();
        na.emplace(std::move(*x));
        nb.emplace(std::move(*y));
        ra.emplace(host(*na, 8192));
        rb.emplace(host(*nb, 8192));
    }
};

World& world() {
    static World w;
    return w;
}

// The rewrite of the next CQEs of one NIC from `chunks` (mode byte, then 32 bytes each).
void plan(sim::testing::Faults& faults, const std::uint8_t* data, std::size_t chunks) {
    if (chunks == 0) return;
    auto bytes = std::make_shared<std::vector<std::uint8_t>>(data, data + chunks * 33);
    auto next = std::make_shared<std::size_t>(0);
    faults.rewrite_cqes(
        [bytes, next](std::span<std::byte, 32> cqe) {
            const std::uint8_t* chunk = bytes->data() + 33 * (*next)++;
            for (std::size_t i = 0; i < 32; ++i)
                cqe[i] =
                    chunk[0] & 1 ? static_cast<std::byte>(chunk[1 + i]) : cqe[i] ^ static_cast<std::byte>(chunk[1 + i]);
        },
        static_cast<unsigned>(chunks));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 1 || size > 1 + 33 * 8) return -1;
    World& w = world();
    auto ca = Cq::create(*w.na, 16), cb = Cq::create(*w.nb, 16);
    if (!ca || !cb) __builtin_trap();
    auto qa = Qp::create(*w.na, *ca, *ca, {4, 4}), qb = Qp::create(*w.nb, *cb, *cb, {4, 4});
    if (!qa || !qb) __builtin_trap();
    if (!qa->connect(qb->endpoint()) || !qb->connect(qa->endpoint())) __builtin_trap();

    const std::size_t chunks = (size - 1) / 33, to_a = std::min<std::size_t>(chunks, data[0] % 5);
    plan(w.a.faults, data + 1, to_a);
    plan(w.b.faults, data + 1 + 33 * to_a, chunks - to_a);

    std::set<std::uint64_t> posted_a{1, 2, 3}, posted_b{101, 102};
    if (!qb->post(Recv{.region = &*w.rb, .bytes = 4096, .id = 101}) ||
        !qb->post(Recv{.region = &*w.rb, .offset = 4096, .bytes = 4096, .id = 102}))
        __builtin_trap();
    if (!qa->post(Send{.region = &*w.ra, .bytes = 64, .id = 1}) ||
        !qa->post(Send{.region = &*w.ra, .offset = 64, .bytes = 2000, .id = 2}) ||
        !qa->post(Read{.region = &*w.ra, .offset = 4096, .bytes = 1000, .remote = w.rb->remote(0), .id = 3}))
        __builtin_trap();
    for (auto [cq, posted] : {std::pair{&*ca, &posted_a}, std::pair{&*cb, &posted_b}}) {
        std::array<Completion, 8> out;
        for (int round = 0; round < 50 && !posted->empty(); ++round) {
            auto got = cq->wait(out, std::chrono::milliseconds(20));
            if (!got) break;  // the Cq is in error: the device was caught
            for (std::size_t i = 0; i < *got; ++i)
                if (posted->erase(out[i].id) != 1) __builtin_trap();  // never posted, or reported twice
        }
        if (!posted->empty() && !cq->error()) {
            // Not all completed, and the Cq claims no error: only a QP the device failed may
            // leave work behind, and then its flushes come on the next poll.
            for (int round = 0; round < 5; ++round) {
                auto got = cq->wait(out, std::chrono::milliseconds(20));
                if (!got) break;
                for (std::size_t i = 0; i < *got; ++i)
                    if (posted->erase(out[i].id) != 1) __builtin_trap();
            }
        }
    }
    w.a.faults.clear();
    w.b.faults.clear();
    (void)qa->destroy();
    (void)qb->destroy();
    (void)ca->destroy();
    (void)cb->destroy();
    return 0;
}
