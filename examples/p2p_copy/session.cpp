// p2p_copy's job as two processes: setup, and each path opened, run and judged on this
// side (session.hpp; the transfer loops: sides.cpp).
#include "session.hpp"

#include <fmt/format.h>

#include "rig/text.hpp"
#include "sides.hpp"

namespace p2p_copy {
namespace {

namespace bs = rig::bootstrap;

// The fill pattern the receiver overwrites its destination with before each path, so that
// a path that moves nothing cannot verify (as copy.cpp's).
constexpr std::uint64_t poison_seed = 0xdead'0000;

constexpr const char* bounce_way = "GPU copy engine to host memory, NIC to NIC, host memory to GPU on each machine";

bs::Job job_of(const Options& o) {
    const bs::Choice choice = o.choice == Choice::Auto     ? bs::Choice::Auto
                              : o.choice == Choice::P2p    ? bs::Choice::P2p
                              : o.choice == Choice::Bounce ? bs::Choice::Bounce
                                                           : bs::Choice::Both;
    return {o.size, o.pipeline.chunk, o.pipeline.depth, o.mode == Mode::Read ? bs::Mode::Read : bs::Mode::SendRecv,
            choice};
}

// Ends the exchange: tells the peer why where the connection still stands, then closes it.
std::unexpected<std::string> give_up(bs::Peer& peer, std::string error) {
    if (!peer.closed()) (void)peer.send(bs::Failure{error});
    peer.close();
    return std::unexpected(std::move(error));
}

// Sends `mine` and receives the peer's T in the protocol's order: `first` writes first
// (the sender, but for the Outcomes, which the receiver's opens).
// `answer`: whether the second side sends its message here, after the first's came.
template <class T>
rig::Result<T> exchange(Session& s, const bs::Message& mine, Role first = Role::Sender, bool answer = true) {
    if (s.role == first)
        if (auto r = s.peer.send(mine); !r) return std::unexpected(std::move(r).error());
    auto theirs = s.peer.receive<T>();
    if (!theirs) return std::unexpected(std::move(theirs).error());
    if (s.role != first && answer)
        if (auto r = s.peer.send(mine); !r) return std::unexpected(std::move(r).error());
    return theirs;
}

rig::Result<void> hello(Session& s) {
    const bs::Job job = job_of(s.options);
    auto port = bs::parse_address(s.local.cable->local());
    if (!port) return rig::fail(s.side().name(), ": the cable's address: ", port.error());
    const bs::Hello mine{s.role, job, port->port};
    if (s.role == Role::Sender)
        if (auto r = s.peer.send(mine); !r) return std::unexpected(std::move(r).error());
    auto theirs = s.peer.receive<bs::Hello>();
    if (!theirs) return std::unexpected(std::move(theirs).error());
    const Role other = s.role == Role::Sender ? Role::Receiver : Role::Sender;
    if (theirs->role != other)
        return give_up(s.peer,
                       fmt::format("{}: is a {} too, where one side must listen (--listen, the receiver) and the "
                                   "other connect (--connect, the sender)",
                                   s.peer_name(), to_string(theirs->role)));
    if (const std::string d = bs::differences(job, theirs->job); !d.empty())
        return give_up(s.peer, fmt::format("{}: its job differs from this {}'s ({}): give both sides the same --size, "
                                           "--chunk, --depth, --path and --pull",
                                           s.peer_name(), to_string(s.role), d));
    if (s.role == Role::Receiver)
        if (auto r = s.peer.send(mine); !r) return std::unexpected(std::move(r).error());
    // The peer's cable: at the peer's address of this connection.
    auto at = bs::parse_address(s.peer_name());
    if (!at) return rig::fail(s.peer_name(), ": ", at.error());
    const std::string remote = bs::to_string(bs::Address{at->host, theirs->cable_port.value_or(at->port)});
    if (auto r = s.local.cable->connect(remote); !r)
        return give_up(s.peer, s.side().name() + ": the cable to " + s.peer_name() + ": " + r.error());
    return {};
}

rig::Result<void> connect_queue_pair(Session& s) {
    const rig::bnxt::Nic& nic = *s.side().nic;
    auto cq = rig::bnxt::Cq::create(nic, 2 * s.depth());
    if (!cq) return give_up(s.peer, s.side().name() + ": " + cq.error());
    s.cq = std::move(*cq);
    auto qp = rig::bnxt::Qp::create(nic, *s.cq, *s.cq, {s.depth(), s.depth()});
    if (!qp) return give_up(s.peer, s.side().name() + ": " + qp.error());
    s.qp = std::move(*qp);
    const auto& limits = nic.limits();
    // The endpoint says the capped MTU, so that both sides' path MTUs agree (the smaller
    // of the two caps) whatever the peer's --mtu.
    rig::bnxt::Endpoint mine = s.qp->endpoint();
    if (s.options.mtu) mine.mtu = std::min(mine.mtu, *s.options.mtu);
    auto theirs = exchange<bs::QueuePair>(s, bs::QueuePair{mine, limits.max_qp_rd_atom, limits.max_qp_init_rd_atom});
    if (!theirs) return std::unexpected(std::move(theirs).error());
    // The reader is the receiver: its initiator depth against the sender's responder depth.
    const std::uint32_t rd_atom = limits.max_qp_rd_atom, init_rd_atom = limits.max_qp_init_rd_atom;
    s.read_depth = s.role == Role::Receiver ? std::min(init_rd_atom, theirs->max_qp_rd_atom)
                                            : std::min(theirs->max_qp_init_rd_atom, rd_atom);
    if (s.options.mode == Mode::Read && s.read_depth == 0)
        return give_up(s.peer,
                       fmt::format("{}: RDMA READ cannot run: {} takes no reads as responder (max_qp_rd_atom {}) "
                                   "or issues none (max_qp_init_rd_atom {})",
                                   s.peer_name(), s.role == Role::Receiver ? "the sender" : "the receiver",
                                   theirs->max_qp_rd_atom, theirs->max_qp_init_rd_atom));
    rig::bnxt::Path path;
    path.mtu = s.options.mtu;
    if (auto r = s.qp->connect(theirs->endpoint, s.retries, path); !r)
        return give_up(s.peer, fmt::format("{}: connecting to {}'s queue pair {}: {}", s.side().name(), s.peer_name(),
                                           rig::text::hex(theirs->endpoint.qpn, 6), r.error()));
    return {};
}

rig::Result<void> allocate(Session& s) {
    auto memory = s.side().gpu->alloc(s.options.size);
    if (!memory) return give_up(s.peer, s.side().name() + ": " + memory.error());
    s.buffer = std::move(*memory);
    if (s.role == Role::Sender)
        if (auto r = s.side().gpu->fill(*s.buffer, s.options.seed); !r)
            return give_up(s.peer, s.side().name() + ": " + r.error());
    return {};
}

// This side's half of a path: p2p where its bus forwards and its NIC registers the GPU's
// BAR; bounce where it has host memory both devices reach.
void open(Session& s, Path path, Opened& o) {
    o.path = path;
    Side& side = s.side();
    if (path == Path::P2p) {
        const auto route = side.route();
        o.reason = side.name() + ": " + summary(route, side.nic->function().addressing()) + group_note(side, route);
        if (!route.forwards()) return;
        auto runs = s.buffer->runs();
        if (!runs) {
            o.reason += "; but " + side.name() + ": " + runs.error();
            return;
        }
        auto region = rig::bnxt::Region::device(*side.nic, runs->runs);
        if (!region) {
            o.reason += "; but " + side.name() + ": " + region.error();
            return;
        }
        o.device = std::move(*region);
        o.offset = runs->offset;
        o.opened = true;
        return;
    }
    o.staging = std::make_unique<Bounce::Staging>();
    o.staging->nic = &*side.nic;
    const std::uint64_t bytes = s.options.pipeline.chunk * s.depth();
    const bool behind_iommu = side.nic->function().addressing() == rig::pci::Addressing::Iommu;
    auto r = behind_iommu ? o.staging->take_gpu_host_memory(*side.gpu, bytes) : o.staging->take_nic_dma_memory(bytes);
    if (!r) {
        o.reason = side.name() + ": " + r.error();
        return;
    }
    o.reason = std::string(o.staging->whose);
    o.opened = true;
}

// The checksum of this side's buffer, on its GPU.
rig::Result<std::uint64_t> checksum(Session& s) {
    auto sum = s.side().gpu->checksum(*s.buffer, 0, s.options.size);
    if (!sum) return rig::fail(s.side().name(), ": ", sum.error());
    return *sum;
}

// The Outcomes after a transfer: the receiver's first, then the sender's; whether the
// destination's checksum is the source's, in words where it is not.
rig::Result<std::string> judge(Session& s, Path path, std::uint64_t bytes) {
    auto sum = checksum(s);
    if (!sum) return give_up(s.peer, std::move(sum).error());
    const bs::Outcome mine{wire_path(path), bytes, *sum, ""};
    // The receiver's opens the pair; it may have reached the sender during its transfer.
    auto theirs = s.role == Role::Sender && s.outcome
                      ? rig::Result<bs::Outcome>(*std::exchange(s.outcome, std::nullopt))
                      : exchange<bs::Outcome>(s, mine, Role::Receiver, false);
    if (!theirs) return std::unexpected(std::move(theirs).error());
    if (s.role == Role::Sender)
        if (auto r = s.peer.send(mine); !r) return std::unexpected(std::move(r).error());
    if (theirs->path != wire_path(path))
        return give_up(s.peer, fmt::format("{}: sent the outcome of the {} path after the {} path", s.peer_name(),
                                           to_string(theirs->path), to_string(path)));
    if (!theirs->failed.empty()) return fmt::format("{}: its transfer failed: {}", s.peer_name(), theirs->failed);
    const bool sender = s.role == Role::Sender;
    const std::uint64_t source = sender ? *sum : theirs->checksum, destination = sender ? theirs->checksum : *sum;
    const std::uint64_t arrived = sender ? theirs->bytes : bytes;
    if (arrived != s.options.size)
        return fmt::format("{} of {} bytes arrived", std::to_string(arrived), std::to_string(s.options.size));
    if (source != destination)
        return "the destination's checksum " + rig::text::hex(destination, 16) + " differs from the source's " +
               rig::text::hex(source, 16);
    return std::string();
}

// Opens, runs and judges one path: its Outcome on this side.
rig::Result<Outcome> run_path(Session& s, Path path, const ProgressFor& progress, const Done& done) {
    Opened mine;
    open(s, path, mine);
    bs::PathOpen message{wire_path(path), mine.opened, mine.reason, {}};
    if (mine.opened && s.role == Role::Sender && s.options.mode == Mode::Read)
        message.regions.push_back(mine.offered(s));
    auto theirs = exchange<bs::PathOpen>(s, message);
    if (!theirs) return std::unexpected(std::move(theirs).error());
    if (theirs->path != wire_path(path))
        return give_up(s.peer, fmt::format("{}: answered the {} path with the {} path", s.peer_name(), to_string(path),
                                           to_string(theirs->path)));
    const bool sender = s.role == Role::Sender;
    const std::string& one = sender ? mine.reason : theirs->reason;  // machine 1's words
    const std::string& two = sender ? theirs->reason : mine.reason;
    const bool read = s.options.mode == Mode::Read;
    Outcome o = Outcome::refused(path, {});
    if (path == Path::P2p) {
        o.reason = one + "; " + two;
        if (!mine.opened || !theirs->opened) return o;
        o.reason = (read ? "machine 2 reads machine 1's GPU region (RDMA READ); "
                         : "machine 1 sends from its GPU region into receives in machine 2's; ") +
                   o.reason;
    } else {
        const bool one_opened = sender ? mine.opened : theirs->opened,
                   two_opened = sender ? theirs->opened : mine.opened;
        if (!one_opened || !two_opened) {
            o.reason = !one_opened && !two_opened ? one + "; " + two : !one_opened ? one : two;
            return o;
        }
        o.reason = std::string(bounce_way) + (read ? "; machine 2 reads machine 1's host region (RDMA READ); " : "; ") +
                   Bounce::memory("machine 1", one, "machine 2", two);
    }
    o.ran = true;
    if (!sender)
        if (auto r = s.side().gpu->fill(*s.buffer, 0, s.options.size, poison_seed + static_cast<std::uint64_t>(path));
            !r)
            return give_up(s.peer, s.side().name() + ": " + r.error());
    const Progress p = progress ? progress(path) : Progress{};
    rig::Result<Moved> moved = !read ? (sender ? push_send(s, mine, p) : push_receive(s, mine, p))
                                     : (sender ? pull_serve(s, mine, p) : pull_read(s, mine, *theirs, p));
    if (done) done(path);
    if (!moved) return give_up(s.peer, std::move(moved).error());
    o.bytes = moved->bytes;
    o.seconds = moved->seconds;
    auto verdict = judge(s, path, moved->bytes);
    if (!verdict) return std::unexpected(std::move(verdict).error());
    o.verified = verdict->empty();
    if (!o.verified) o.reason += "; " + *verdict;
    return o;
}

}  // namespace

std::chrono::nanoseconds retry_budget(const rig::bnxt::Retries& retries) {
    return std::chrono::nanoseconds(std::int64_t{4096} << retries.timeout) * (1 + retries.retry_cnt);
}

std::string retry_words(const rig::bnxt::Retries& retries) {
    return fmt::format("ACK timeout {} x {} tries (1 + retry_cnt {}) = {}",
                       rig::text::duration(std::chrono::nanoseconds(std::int64_t{4096} << retries.timeout)),
                       1 + retries.retry_cnt, retries.retry_cnt, rig::text::duration(retry_budget(retries)));
}

rig::Result<Report> run_side(Local& local, bs::Peer& peer, Role role, const Options& asked,
                             const rig::bnxt::Retries& retries, const ProgressFor& progress, const Done& done) {
    Options options = asked;
    options.pipeline = fitted(asked.pipeline, asked.size);
    Session s{local, peer, role, options, retries, {}, {}, 1, {}, {}};
    Report report{local.topology, options.size, local.side.gpu_bus(), local.side.nic_bus(), {}, {}};
    report.side = fmt::format("this process: {}, the {}, with {} (queue pairs retry: {})", local.side.name(),
                              to_string(role), peer.address(), retry_words(retries));
    if (auto r = hello(s); !r) return std::unexpected(std::move(r).error());
    if (auto r = connect_queue_pair(s); !r) return std::unexpected(std::move(r).error());
    if (const auto mtu = s.qp->path_mtu()) report.path_mtu = rig::bnxt::bytes(*mtu);
    if (auto r = allocate(s); !r) return std::unexpected(std::move(r).error());
    auto path = [&](Path p) -> rig::Result<void> {
        auto o = run_path(s, p, progress, done);
        if (!o) return std::unexpected(std::move(o).error());
        report.paths.push_back(std::move(*o));
        return {};
    };
    switch (options.choice) {
    case Choice::Both:
        if (auto r = path(Path::P2p); !r) return std::unexpected(std::move(r).error());
        if (auto r = path(Path::Bounce); !r) return std::unexpected(std::move(r).error());
        break;
    case Choice::P2p:
        if (auto r = path(Path::P2p); !r) return std::unexpected(std::move(r).error());
        break;
    case Choice::Bounce:
        if (auto r = path(Path::Bounce); !r) return std::unexpected(std::move(r).error());
        break;
    case Choice::Auto: {
        if (auto r = path(Path::P2p); !r) return std::unexpected(std::move(r).error());
        Outcome& first = report.paths.back();
        if (first.ran) {
            first.reason = "auto chose p2p: " + first.reason;
            break;
        }
        const std::string why = first.reason;
        report.paths.pop_back();
        if (auto r = path(Path::Bounce); !r) return std::unexpected(std::move(r).error());
        Outcome& second = report.paths.back();
        if (second.ran) second.reason = "auto chose bounce, since p2p cannot run: " + why + "; " + second.reason;
        break;
    }
    }
    peer.close();
    return report;
}

}  // namespace p2p_copy
