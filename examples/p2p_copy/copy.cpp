// Running p2p_copy's paths and judging them (copy.hpp).
#include "copy.hpp"

#include <chrono>

#include "ceiling.hpp"

#include "rig/pci/dma.hpp"
#include "rig/text.hpp"

namespace p2p_copy {
namespace {

using Clock = std::chrono::steady_clock;

// Fill patterns the destination is overwritten with before each path.
constexpr std::uint64_t poison_seed = 0xdead'0000;

struct Job {
    Pair& pair;
    Link& link;
    const Buffers& buffers;
    const Options& options;
    const ProgressFor& progress;
    const Done& done;
};

// Times `transfer`, then checks the destination: the Outcome of a path that ran.
template <class Transfer>
Outcome run(const Job& job, Path path, std::string reason, Transfer&& transfer) {
    Outcome o = Outcome::refused(path, std::move(reason));
    o.ran = true;
    const std::uint64_t size = job.options.size;
    if (auto r =
            job.pair.two.gpu->fill(job.buffers.destination, 0, size, poison_seed + static_cast<std::uint64_t>(path));
        !r) {
        o.reason += "; failed: " + job.pair.two.name() + ": " + r.error();
        return o;
    }
    const Progress progress = job.progress ? job.progress(path) : Progress{};
    const auto start = Clock::now();
    auto moved = transfer(progress);
    o.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    if (job.done) job.done(path);
    if (!moved) {
        o.reason += "; failed: " + moved.error();
        return o;
    }
    o.bytes = size;
    auto sums = checksums(job.pair, job.buffers, size);
    if (!sums) {
        o.reason += "; not verified: " + sums.error();
        return o;
    }
    o.verified = sums->equal();
    if (!o.verified)
        o.reason += "; the destination's checksum " + rig::text::hex(sums->destination, 16) +
                    " differs from the source's " + rig::text::hex(sums->source, 16);
    return o;
}

// The peer-to-peer path, or its refusal: the bus on either machine, or a NIC that will not
// register its GPU's BAR.
Outcome p2p(const Job& job, const Forwarding& bus) {
    if (!bus.both) return Outcome::refused(Path::P2p, bus.reason);
    auto path = PeerToPeer::open(job.pair, job.link, job.buffers, job.options.mode, job.options.pipeline);
    if (!path) return Outcome::refused(Path::P2p, bus.reason + "; but " + path.error());
    const char* how = job.options.mode == Mode::Read
                          ? "machine 2 reads machine 1's GPU region (RDMA READ); "
                          : "machine 1 sends from its GPU region into receives in machine 2's; ";
    return run(job, Path::P2p, how + bus.reason, [&](const Progress& p) { return path->run(job.options.size, p); });
}

Outcome bounce(const Job& job, std::string why) {
    auto path = Bounce::open(job.pair, job.link, job.buffers, job.options.mode, job.options.pipeline);
    if (!path) return Outcome::refused(Path::Bounce, path.error());
    const char* how = job.options.mode == Mode::Read ? "; machine 2 reads machine 1's host region (RDMA READ); " : "; ";
    return run(job, Path::Bounce, std::move(why) + how + (*path)->memory(),
               [&](const Progress& p) { return (*path)->run(job.options.size, p); });
}

constexpr const char* bounce_way = "GPU copy engine to host memory, NIC to NIC, host memory to GPU on each machine";

}  // namespace

Pipeline fitted(Pipeline p, std::uint64_t size) {
    p.chunk = std::min(p.chunk, (size + rig::pci::page_bytes - 1) / rig::pci::page_bytes * rig::pci::page_bytes);
    p.depth = static_cast<std::uint32_t>(std::min<std::uint64_t>(p.depth, (size + p.chunk - 1) / p.chunk));
    return p;
}

rig::Result<Report> copy(Pair& pair, const Options& asked, const ProgressFor& progress, const Done& done) {
    Options options = asked;
    options.pipeline = fitted(asked.pipeline, asked.size);
    Report report{pair.topology, options.size, pair.one.gpu_bus(), pair.one.nic_bus(), {}, {}};
    auto link = Link::connect(pair, options.pipeline.depth, options.mtu);
    if (!link) return std::unexpected(std::move(link).error());
    if (const auto mtu = link->qp[0]->path_mtu()) report.path_mtu = rig::bnxt::bytes(*mtu);
    auto buffers = Buffers::allocate(pair, options.size);
    if (!buffers) return std::unexpected(std::move(buffers).error());
    if (auto r = pair.one.gpu->fill(buffers->source, options.seed); !r)
        return rig::fail(pair.one.name(), ": ", r.error());
    const Job job{pair, *link, *buffers, options, progress, done};
    const Forwarding bus = forwarding(pair);
    switch (options.choice) {
    case Choice::Both:
        report.paths.push_back(p2p(job, bus));
        report.paths.push_back(bounce(job, bounce_way));
        break;
    case Choice::P2p: report.paths.push_back(p2p(job, bus)); break;
    case Choice::Bounce: report.paths.push_back(bounce(job, bounce_way)); break;
    case Choice::Auto: {
        Outcome first = p2p(job, bus);
        if (first.ran) {
            first.reason = "auto chose p2p: " + first.reason;
            report.paths.push_back(std::move(first));
        } else {
            report.paths.push_back(
                bounce(job, "auto chose bounce, since p2p cannot run: " + first.reason + "; " + bounce_way));
        }
        break;
    }
    }
    for (Outcome& o : report.paths) judge(o, ceiling(o.path, {&pair.one, &pair.two}));
    return report;
}

int exit_status(const Report& report, Choice choice) {
    bool ran = false;
    for (const Outcome& o : report.paths) {
        if (o.ran && !o.verified) return 1;  // an impossible figure is not verified
        if (!o.ran && (choice == Choice::P2p || choice == Choice::Bounce)) return 1;
        ran = ran || o.ran;
    }
    return ran ? 0 : 1;
}

}  // namespace p2p_copy
