// The peer-to-peer and bounce paths of p2p_copy (paths.hpp).
//
// One loop (stream) drives both send/receive paths: it keeps up to `depth` receives posted
// on machine 2, sends chunk i only once the receive that takes it is posted, and learns of
// progress only from completions. The bounce path hooks its GPU copies in: a chunk is
// copied to machine 1's host memory just before its send, and out of machine 2's host
// memory as soon as its receive completes, into the slot (i mod depth) that the next
// receive reuses. Reads (Mode::Read) need no receives: machine 2 reads chunk after chunk
// (read_all), with the same hooks: the bounce path copies chunk i into machine 1's host
// slot just before its read is posted, and out of machine 2's once the read completed.
#include "paths.hpp"

#include <algorithm>
#include <array>

#include "rig/pci/function.hpp"
#include "rig/pci/groups.hpp"
#include "rig/text.hpp"

namespace p2p_copy {
namespace {

using rig::bnxt::Completion;
using rig::bnxt::Region;
using Clock = std::chrono::steady_clock;

// A transfer without a completion for this long has stalled (a lost wire, a model that
// stopped); it is an Error, not a hang.
constexpr auto stall_after = std::chrono::seconds(30);
// How long one wait for a completion blocks before the loop looks at the other queue.
constexpr auto wait_slice = std::chrono::milliseconds(5);

// Which sends ask for the receiver's attention (Solicit::Yes): every `every`-th chunk and
// the last. The receiver's waits wake only on those, so it takes its completions in
// batches and is woken once per batch, not once per chunk.
struct Solicited {
    std::uint64_t every, count;
    bool operator()(std::uint64_t i) const { return (i + 1) % every == 0 || i + 1 == count; }
    // The first solicited chunk at or after `i`.
    std::uint64_t next(std::uint64_t i) const { return std::min(count - 1, (i / every + 1) * every - 1); }
};

std::string describe(const char* what, std::uint64_t i, const Chunks& chunks) {
    return std::string(what) + " of chunk " + std::to_string(i) + " (" + rig::text::bytes(chunks.length(i)) +
           " at byte " + std::to_string(chunks.offset(i)) + ")";
}

// Where a chunk leaves machine 1's region and lands in machine 2's, and what runs around
// it: before_send just before its send or read is posted, after_receive once its receive
// or read completed.
struct Hooks {
    const Region* send_region;
    const Region* recv_region;
    std::function<std::uint64_t(std::uint64_t)> send_offset, recv_offset;
    std::function<rig::Result<void>(std::uint64_t)> before_send, after_receive;  // may be empty
    std::uint64_t staged = 0;                                                    // chunks before_send has run for

    // Runs before_send for chunk i once, however often a full queue makes its post wait.
    rig::Result<void> stage(std::uint64_t i) {
        if (!before_send || i < staged) return {};
        staged = i + 1;
        return before_send(i);
    }
};

class Stall {
public:
    void moved() { last_ = Clock::now(); }
    rig::Result<void> check(const Side& side, std::uint64_t done, std::uint64_t bytes) const {
        if (Clock::now() - last_ < stall_after) return {};
        return rig::fail(side.name(), ": no completion for ", std::to_string(stall_after.count()), " s with ",
                         rig::text::bytes(done), " of ", rig::text::bytes(bytes), " arrived");
    }

private:
    Clock::time_point last_ = Clock::now();
};

rig::Result<void> stream(Pair& pair, Link& link, Hooks& h, const Chunks& chunks, std::uint32_t depth,
                         const Progress& progress) {
    rig::bnxt::Qp& sender = *link.qp[0];
    rig::bnxt::Qp& receiver = *link.qp[1];
    rig::bnxt::Cq& sent_cq = *link.cq[0];
    rig::bnxt::Cq& received_cq = *link.cq[1];
    const std::uint64_t n = chunks.count();
    std::uint64_t posted = 0, received = 0, sent = 0, send_done = 0, bytes_done = 0;
    std::array<Completion, 32> out;
    const Solicited solicited{std::max<std::uint64_t>(1, depth / 2), n};
    Stall stall;
    while (received < n || send_done < sent) {
        bool moved = false;
        while (posted < n && posted - received < depth &&
               receiver.post(rig::bnxt::Recv{.region = h.recv_region,
                                             .offset = h.recv_offset(posted),
                                             .bytes = chunks.length(posted),
                                             .id = posted})) {
            ++posted;
            moved = true;
        }
        while (sent < posted && sent - send_done < depth) {
            if (auto r = h.stage(sent); !r) return r;
            const auto solicit = solicited(sent) ? rig::bnxt::Solicit::Yes : rig::bnxt::Solicit::No;
            if (!sender.post(rig::bnxt::Send{.region = h.send_region,
                                             .offset = h.send_offset(sent),
                                             .bytes = chunks.length(sent),
                                             .id = sent,
                                             .solicited = solicit}))
                break;
            ++sent;
            moved = true;
        }
        // Wait on the queue whose completion the loop needs next: a receive whose send
        // is out (woken by the next solicited one where it is out), else the sends'
        // acknowledgements.
        rig::bnxt::Cq& next = sent > received ? received_cq : sent_cq;
        const auto notify = &next == &received_cq && solicited.next(received) < sent ? rig::bnxt::Notify::Solicited
                                                                                     : rig::bnxt::Notify::Any;
        for (rig::bnxt::Cq* cq : {&sent_cq, &received_cq}) {
            std::size_t got = 0;
            if (moved || cq != &next) {
                got = cq->poll(out);
            } else {
                auto waited = cq->wait(out, wait_slice, notify);
                if (!waited) return rig::fail((cq == &sent_cq ? pair.one : pair.two).name(), ": ", waited.error());
                got = *waited;
            }
            for (std::size_t k = 0; k < got; ++k) {
                if (cq == &sent_cq) {
                    if (auto r = check_completion(out[k], pair.one, "send", chunks, true); !r) return r;
                    ++send_done;
                    continue;
                }
                if (auto r = check_completion(out[k], pair.two, "receive", chunks, true); !r) return r;
                if (h.after_receive)
                    if (auto r = h.after_receive(out[k].id); !r) return r;
                ++received;
                bytes_done += out[k].bytes;
                if (progress) progress(bytes_done);
            }
            if (got > 0) moved = true;
        }
        if (moved) stall.moved();
        else if (auto r = stall.check(pair.two, bytes_done, chunks.bytes); !r) return r;
    }
    return {};
}

// Machine 2 reads the chunks of machine 1's send_region into its recv_region.
rig::Result<void> read_all(Pair& pair, Link& link, Hooks& h, const Chunks& chunks, std::uint32_t depth,
                           const Progress& progress) {
    rig::bnxt::Qp& reader = *link.qp[1];
    rig::bnxt::Cq& cq = *link.cq[1];
    const std::uint64_t n = chunks.count();
    std::uint64_t posted = 0, done = 0, bytes_done = 0;
    std::array<Completion, 32> out;
    Stall stall;
    while (done < n) {
        bool moved = false;
        while (posted < n && posted - done < depth) {
            if (auto r = h.stage(posted); !r) return r;
            if (!reader.post(rig::bnxt::Read{.region = h.recv_region,
                                             .offset = h.recv_offset(posted),
                                             .bytes = chunks.length(posted),
                                             .remote = h.send_region->remote(h.send_offset(posted)),
                                             .id = posted}))
                break;
            ++posted;
            moved = true;
        }
        auto got = moved ? rig::Result<std::size_t>(cq.poll(out)) : cq.wait(out, wait_slice);
        if (!got) return rig::fail(pair.two.name(), ": ", got.error());
        for (std::size_t k = 0; k < *got; ++k) {
            if (auto r = check_completion(out[k], pair.two, "read", chunks, true); !r) return r;
            if (h.after_receive)
                if (auto r = h.after_receive(out[k].id); !r) return r;
            ++done;
            bytes_done += out[k].bytes;
            if (progress) progress(bytes_done);
        }
        if (moved || *got > 0) stall.moved();
        else if (auto r = stall.check(pair.two, bytes_done, chunks.bytes); !r) return r;
    }
    return {};
}

// A transfer by `mode`: sends into posted receives (stream) or reads (read_all), these
// bounded further by the NICs' read depths.
rig::Result<void> transfer(Pair& pair, Link& link, Mode mode, Hooks& h, const Chunks& chunks, std::uint32_t depth,
                           const Progress& progress) {
    if (mode == Mode::Read) return read_all(pair, link, h, chunks, std::min(depth, link.read_depth), progress);
    return stream(pair, link, h, chunks, depth, progress);
}

std::string redirects_of(const rig::pci::Route& route) {
    std::string out;
    for (const auto& r : route.redirects)
        out += (out.empty() ? "ACS redirects at " : ", ") + r.bus + " (ACSCtl " + rig::text::hex(r.control, 4) + ")";
    return out;
}

}  // namespace

rig::Result<void> check_completion(const Completion& c, const Side& side, const char* what, const Chunks& chunks,
                                   bool exact_bytes) {
    if (!c.ok())
        return rig::fail(side.name(), ": the ", describe(what, c.id, chunks), " completed with ",
                         std::string(to_string(c.status)), " (CQE status ", rig::text::hex(c.code, 2), ")");
    if (exact_bytes && c.bytes != chunks.length(c.id))
        return rig::fail(side.name(), ": the ", describe(what, c.id, chunks), " completed with ",
                         std::to_string(c.bytes), " bytes");
    return {};
}

// The route on one machine in words, and how its NIC's requests reach the GPU's BAR: at
// bus addresses, or at IOVAs its IOMMU domain maps to the BAR (Region::device).
std::string summary(const rig::pci::Route& route, rig::pci::Addressing nic) {
    if (route.verdict == rig::pci::Verdict::Unread) return "unread: " + route.unread;
    std::string out = "distance " + std::string(route.distance ? to_string(*route.distance) : "unknown") + ", ";
    const bool iommu = nic == rig::pci::Addressing::Iommu;
    const std::string rule = route.cpu_rule ? "the AMD CPU rule" : route.host_bridge_rule;
    if (route.verdict == rig::pci::Verdict::ThroughHostBridge && iommu) {
        const std::string redirects = redirects_of(route);
        return out + "forwards (through the host bridge, IOVA via the NIC's IOMMU domain: " +
               (redirects.empty() ? "" : redirects + " up to the root complex, where ") + rule + ")";
    }
    if (route.forwards()) {
        out += "forwards (" + std::string(to_string(route.verdict));
        if (route.common) out += " below " + *route.common;
        if (route.verdict == rig::pci::Verdict::ThroughHostBridge) out += ", " + rule;
        if (iommu) out += ", bus addresses the switch takes to the BAR before the NIC's IOMMU sees them";
        return out + ")";
    }
    out += "does not forward:";
    const std::string redirects = redirects_of(route);
    if (!redirects.empty()) out += " " + redirects + " up to the root complex, and";
    else if (!route.common) out += " no common upstream bridge, and";
    out += " " + (route.host_bridge_rule.empty() ? std::string("the root complex refuses") : route.host_bridge_rule);
    return out;
}

std::string group_note(const Side& side, const rig::pci::Route& route) {
    const bool iommu = side.nic->function().addressing() == rig::pci::Addressing::Iommu;
    const std::string note = rig::pci::direct_behind_iommu(side.machine(), route, iommu);
    return note.empty() ? note : "; " + note;
}

std::string_view to_string(Path path) { return path == Path::P2p ? "p2p" : "bounce"; }

rig::Result<Link> Link::connect(Pair& pair, std::uint32_t depth, std::optional<rig::bnxt::Mtu> mtu) {
    Link link;
    Side* sides[2] = {&pair.one, &pair.two};
    for (int i = 0; i < 2; ++i) {
        auto cq = rig::bnxt::Cq::create(*sides[i]->nic, 2 * depth);
        if (!cq) return rig::fail(sides[i]->name(), ": ", cq.error());
        link.cq[i] = std::move(*cq);
        auto qp = rig::bnxt::Qp::create(*sides[i]->nic, *link.cq[i], *link.cq[i], {depth, depth});
        if (!qp) return rig::fail(sides[i]->name(), ": ", qp.error());
        link.qp[i] = std::move(*qp);
    }
    rig::bnxt::Path path;
    path.mtu = mtu;
    for (int i = 0; i < 2; ++i)
        if (auto r = link.qp[i]->connect(link.qp[1 - i]->endpoint(), {}, path); !r)
            return rig::fail(sides[i]->name(), ": ", r.error());
    link.read_depth = std::max<std::uint32_t>(
        1, std::min<std::uint32_t>(pair.two.nic->limits().max_qp_init_rd_atom, pair.one.nic->limits().max_qp_rd_atom));
    return link;
}

Forwarding forwarding(const Pair& pair) {
    Forwarding f{true, {}};
    for (const Side* side : {&pair.one, &pair.two}) {
        const auto route = side->route();
        f.both = f.both && route.forwards();
        f.reason += (f.reason.empty() ? "" : "; ") + side->name() + ": " +
                    summary(route, side->nic->function().addressing()) + group_note(*side, route);
    }
    return f;
}

rig::Result<Buffers> Buffers::allocate(Pair& pair, std::uint64_t bytes) {
    auto source = pair.one.gpu->alloc(bytes);
    if (!source) return rig::fail(pair.one.name(), ": ", source.error());
    auto destination = pair.two.gpu->alloc(bytes);
    if (!destination) return rig::fail(pair.two.name(), ": ", destination.error());
    return Buffers{std::move(*source), std::move(*destination), bytes};
}

rig::Result<PeerToPeer> PeerToPeer::open(Pair& pair, Link& link, const Buffers& buffers, Mode mode, Pipeline pipeline) {
    std::optional<Region> regions[2];
    std::uint64_t offsets[2] = {};
    const Side* sides[2] = {&pair.one, &pair.two};
    const rig::gpu::Memory* memory[2] = {&buffers.source, &buffers.destination};
    for (int i = 0; i < 2; ++i) {
        auto runs = memory[i]->runs();
        if (!runs) return rig::fail(sides[i]->name(), ": ", runs.error());
        auto region = Region::device(*sides[i]->nic, runs->runs);
        if (!region) return rig::fail(sides[i]->name(), ": ", region.error());
        regions[i] = std::move(*region);
        offsets[i] = runs->offset;
    }
    PeerToPeer path(link, std::move(*regions[0]), std::move(*regions[1]), mode, pipeline);
    path.offsets_[0] = offsets[0];
    path.offsets_[1] = offsets[1];
    path.pair_ = &pair;
    return path;
}

rig::Result<void> PeerToPeer::run(std::uint64_t bytes, const Progress& progress) {
    const Chunks chunks{bytes, pipeline_.chunk};
    Hooks hooks{&source_,
                &destination_,
                [&](std::uint64_t i) { return offsets_[0] + chunks.offset(i); },
                [&](std::uint64_t i) { return offsets_[1] + chunks.offset(i); },
                {},
                {}};
    return transfer(*pair_, *link_, mode_, hooks, chunks, pipeline_.depth, progress);
}

rig::Result<std::unique_ptr<Bounce>> Bounce::open(Pair& pair, Link& link, const Buffers& buffers, Mode mode,
                                                  Pipeline pipeline) {
    std::unique_ptr<Bounce> path(new Bounce(pair, link, buffers, mode, pipeline));
    const Side* sides[2] = {&pair.one, &pair.two};
    const std::uint64_t bytes = pipeline.chunk * pipeline.depth;
    for (int i = 0; i < 2; ++i) {
        Staging& s = path->staging_[i];
        s.nic = &*sides[i]->nic;
        const bool behind_iommu = s.nic->function().addressing() == rig::pci::Addressing::Iommu;
        auto r = behind_iommu ? s.take_gpu_host_memory(*sides[i]->gpu, bytes) : s.take_nic_dma_memory(bytes);
        if (!r) return rig::fail(sides[i]->name(), ": ", r.error());
    }
    return path;
}

rig::Result<void> Bounce::Staging::take_gpu_host_memory(const rig::gpu::Gpu& gpu, std::uint64_t bytes) {
    auto memory = gpu.host(bytes);
    if (!memory) return std::unexpected(std::move(memory).error());
    pinned = std::move(*memory);
    host = pinned->buffer();
    whose = "the GPU's pinned host memory (Gpu::host), which the NIC pins again into its IOMMU domain";
    return register_pages();
}

rig::Result<void> Bounce::Staging::take_nic_dma_memory(std::uint64_t bytes) {
    auto memory = nic->function().alloc_dma(bytes, rig::pci::Contiguity::Contiguous);
    if (!memory) return std::unexpected(std::move(memory).error());
    dma = std::move(*memory);
    host = rig::gpu::HostBuffer::of(dma);
    whose = "the NIC's DMA memory, at physical addresses the GPU reaches too";
    return register_pages();
}

rig::Result<void> Bounce::Staging::register_pages() {
    if (!host.window.is_mapped()) return rig::fail("the bounce path's host memory is not mapped into this process");
    // Resident before the clock starts, as pinned memory is: the simulator's DMA memory
    // is committed on first touch.
    std::fill_n(host.window.data(), host.window.size(), std::byte{0});
    auto pages = Region::pages(*nic, {host.window.data(), host.window.size()});
    if (!pages) return std::unexpected(std::move(pages).error());
    region = std::move(*pages);
    return {};
}

std::string Bounce::memory(const std::string& one, std::string_view one_whose, const std::string& two,
                           std::string_view two_whose) {
    if (one_whose == two_whose) return "host memory on each machine: " + std::string(one_whose);
    return "host memory on " + one + ": " + std::string(one_whose) + "; on " + two + ": " + std::string(two_whose);
}

std::string Bounce::memory() const {
    return memory(pair_->one.name(), staging_[0].whose, pair_->two.name(), staging_[1].whose);
}

void Bounce::Staging::release() {
    if (!nic || nic->closed()) return;
    if (region) (void)region->deregister();  // unpins; an error leaves the memory to close
    if (dma.window.size() > 0 && (!region || region->deregistered())) nic->function().free_dma(dma);
    dma = {};
}

Bounce::~Bounce() {
    for (Staging& s : staging_) s.release();
    // The GPU's host memory goes with staging_, after the NIC unpinned it; where the NIC
    // could not, its pin keeps the pages until the NIC closes.
}

rig::Result<void> Bounce::run(std::uint64_t bytes, const Progress& progress) {
    const Chunks chunks{bytes, pipeline_.chunk};
    const rig::gpu::Gpu& sender = *pair_->one.gpu;
    const rig::gpu::Gpu& receiver = *pair_->two.gpu;
    auto slot = [&](std::uint64_t i) { return (i % pipeline_.depth) * pipeline_.chunk; };
    Hooks hooks{&*staging_[0].region,
                &*staging_[1].region,
                slot,
                slot,
                [&](std::uint64_t i) -> rig::Result<void> {
                    auto r = sender.copy_to_host(buffers_.source, chunks.offset(i), staging_[0].host, slot(i),
                                                 chunks.length(i));
                    if (!r) return rig::fail(pair_->one.name(), ": ", r.error());
                    return {};
                },
                [&](std::uint64_t i) -> rig::Result<void> {
                    auto r = receiver.copy_from_host(staging_[1].host, slot(i), buffers_.destination, chunks.offset(i),
                                                     chunks.length(i));
                    if (!r) return rig::fail(pair_->two.name(), ": ", r.error());
                    return {};
                }};
    return transfer(*pair_, *link_, mode_, hooks, chunks, pipeline_.depth, progress);
}

rig::Result<Checksums> checksums(Pair& pair, const Buffers& buffers, std::uint64_t bytes) {
    auto source = pair.one.gpu->checksum(buffers.source, 0, bytes);
    if (!source) return rig::fail(pair.one.name(), ": ", source.error());
    auto destination = pair.two.gpu->checksum(buffers.destination, 0, bytes);
    if (!destination) return rig::fail(pair.two.name(), ": ", destination.error());
    return Checksums{*source, *destination};
}

}  // namespace p2p_copy
