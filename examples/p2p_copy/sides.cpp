// The four transfer loops of a two-process job (sides.hpp; the rules: session.hpp).
//
// Each loop drives its queue pair as paths.cpp's loops drive theirs (post up to the depth,
// poll, wait a slice of 5 ms where nothing moved) and looks at the connection between
// (Watch): at least every 20 ms, or waiting on it where the next step needs a message.
// What a message from the peer may be during a transfer: a Failure (the peer gave up),
// or the count the path's order expects (Staged to the reader of the bounce path,
// Consumed to the sender of either path read from); anything else breaks the order.
#include "sides.hpp"

#include <array>
#include <fmt/format.h>

#include "rig/text.hpp"

namespace p2p_copy {
namespace {

namespace bs = rig::bootstrap;
using Clock = std::chrono::steady_clock;
using rig::bnxt::Completion;

constexpr auto stall_after = std::chrono::seconds(30);  // no progress with the peer connected
constexpr auto wait_slice = std::chrono::milliseconds(5);
constexpr auto look_every = std::chrono::milliseconds(20);
constexpr auto report_every = std::chrono::milliseconds(100);  // a reader's Consumed on the p2p path

double since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// "during the p2p transfer, with 3 MiB of 16 MiB sent".
std::string how_far(Path path, std::uint64_t bytes, std::uint64_t of, const char* verb) {
    return fmt::format("during the {} transfer, with {} of {} {}", to_string(path), rig::text::bytes(bytes),
                       rig::text::bytes(of), verb);
}

// Whether a side of a transfer has work in flight on its queue pair: the requester (the
// sender's sends, the receiver's reads), whose completions end it where the peer goes
// away; or not (receives posted, a region read from), which the connection's end ends.
enum class Work { InFlight, None };

// The connection during a transfer. Where it fails, a side with work in flight keeps
// going: its queue pair's completion is the verdict (gone(), grace_over()); the other
// side's look or send is the connection's Error.
class Watch {
public:
    Watch(Session& s, Work work) : s_(&s), work_(work) {}

    // The peer's next message where one came; looks at most every look_every unless
    // `wait` is above zero (then waits up to it). Error where the peer sent a Failure, or
    // (Work::None) the connection failed.
    rig::Result<std::optional<bs::Message>> look(std::chrono::milliseconds wait = {}) {
        if (gone_at_) return std::optional<bs::Message>{};
        const auto now = Clock::now();
        if (wait.count() == 0 && now - last_ < look_every) return std::optional<bs::Message>{};
        last_ = now;
        auto m = s_->peer.poll(wait);
        if (!m) return lost(std::move(m).error());
        if (*m && std::holds_alternative<bs::Failure>(**m)) {
            s_->peer.close();  // it closes too
            return rig::fail(s_->peer_name(), ": gave up: ", std::get<bs::Failure>(**m).message);
        }
        return m;
    }
    // Sends `m`; where that fails, as look.
    rig::Result<void> send(const bs::Message& m) {
        if (gone_at_) return {};
        if (auto r = s_->peer.send(m); !r)
            if (auto lost_it = lost(std::move(r).error()); !lost_it) return std::unexpected(std::move(lost_it).error());
        return {};
    }
    bool gone() const { return gone_at_.has_value(); }
    // The patience of a side with work in flight once the connection failed: twice the
    // retry budget and a second.
    bool grace_over() const {
        return gone_at_ && Clock::now() - *gone_at_ > 2 * retry_budget(s_->retries) + std::chrono::seconds(1);
    }
    // "; 0.54 s before, 127.0.0.1:18515: closed the connection before the header of the next message".
    std::string gone_words() const {
        if (!gone_at_) return {};
        return fmt::format("; {:.2f} s before, {}", since(*gone_at_), error_);
    }
    const std::string& error() const { return error_; }

private:
    rig::Result<std::optional<bs::Message>> lost(std::string error) {
        error_ = std::move(error);
        if (work_ == Work::None) return std::unexpected(error_);
        gone_at_ = Clock::now();
        return std::optional<bs::Message>{};
    }

    Session* s_;
    Work work_;
    Clock::time_point last_{};
    std::optional<Clock::time_point> gone_at_;
    std::string error_;
};

std::string unexpected_message(const Session& s, const bs::Message& m, Path path) {
    return fmt::format("{}: sent \"{}\" during the {} transfer, out of the order of rig's bootstrap protocol",
                       s.peer_name(), bs::type_name(m), to_string(path));
}

// A requester's failed completion, with what the queue pair and the connection say of the peer.
std::string requester_error(Session& s, std::string completion, const Completion& c, const Watch& w) {
    if (c.status == rig::bnxt::Status::TransportRetryExceeded)
        completion += fmt::format(": no acknowledgement from {} within the retry budget ({})", s.peer_name(),
                                  retry_words(s.retries));
    else completion += " (peer " + s.peer_name() + ")";
    completion += w.gone_words();
    if (auto cable = s.local.cable->status(); !cable) completion += "; the cable: " + cable.error();
    return completion;
}

// A requester whose connection failed and whose queue pair said nothing within the grace.
std::string no_verdict(const Session& s, const Watch& w, std::string far, std::uint64_t outstanding, const char* what) {
    return fmt::format(
        "{}, {}; no completion reported {} {}(s) outstanding within twice the retry budget ({}) and a second",
        w.error(), far, outstanding, what, retry_words(s.retries));
}

std::string stalled(const Session& s, const std::string& far) {
    return fmt::format("{}: no progress for {} s with {} still connected, {}", s.local.side.name(), stall_after.count(),
                       s.peer_name(), far);
}

// A count from the peer (Staged, Consumed): cumulative, so never below `last`, and at most `most`.
rig::Result<std::uint64_t> count_of(const Session& s, const char* type, std::uint64_t chunks, std::uint64_t last,
                                    std::uint64_t most) {
    if (chunks < last || chunks > most)
        return rig::fail(s.peer_name(), ": sent \"", type, "\" of ", std::to_string(chunks), " chunks after ",
                         std::to_string(last), ", where ", std::to_string(last), " to ", std::to_string(most),
                         " may come");
    return chunks;
}

}  // namespace

Opened::~Opened() {
    if (staging) staging->release();
}

std::uint64_t Opened::at(std::uint64_t i, const Session& s) const {
    const Chunks chunks = s.chunks();
    return path == Path::P2p ? offset + chunks.offset(i) : (i % s.depth()) * chunks.chunk;
}

bs::RemoteRegion Opened::offered(const Session& s) const {
    const std::uint64_t bytes = path == Path::P2p ? s.options.size : s.options.pipeline.chunk * s.depth();
    return {region().remote(path == Path::P2p ? offset : 0), bytes};
}

rig::Result<Moved> push_send(Session& s, Opened& mine, const Progress& progress) {
    auto ready = s.peer.receive<bs::Ready>();
    if (!ready) return std::unexpected(std::move(ready).error());
    if (ready->path != wire_path(mine.path))
        return rig::fail(s.peer_name(), ": sent \"ready\" for the ", to_string(ready->path), " path during the ",
                         to_string(mine.path), " path");
    const Chunks chunks = s.chunks();
    const std::uint64_t n = chunks.count();
    const rig::gpu::Gpu& gpu = *s.side().gpu;
    std::uint64_t sent = 0, done = 0, bytes = 0;
    std::array<Completion, 32> out;
    Watch w(s, Work::InFlight);
    auto last_progress = Clock::now();
    const auto start = Clock::now();
    while (done < n) {
        bool moved = false;
        while (sent < n && sent - done < s.depth()) {
            if (mine.path == Path::Bounce) {
                auto r = gpu.copy_to_host(*s.buffer, chunks.offset(sent), mine.staging->host, mine.at(sent, s),
                                          chunks.length(sent));
                if (!r) return rig::fail(s.side().name(), ": ", r.error());
            }
            if (!s.qp->post(rig::bnxt::Send{
                    .region = &mine.region(), .offset = mine.at(sent, s), .bytes = chunks.length(sent), .id = sent}))
                break;
            ++sent;
            moved = true;
        }
        auto got = moved ? rig::Result<std::size_t>(s.cq->poll(out)) : s.cq->wait(out, wait_slice);
        if (!got) return rig::fail(s.side().name(), ": ", got.error());
        for (std::size_t k = 0; k < *got; ++k) {
            if (auto r = check_completion(out[k], s.side(), "send", chunks, true); !r)
                return std::unexpected(requester_error(s, std::move(r).error(), out[k], w));
            ++done;
            bytes += out[k].bytes;
            if (progress) progress(bytes);
        }
        if (moved || *got > 0) last_progress = Clock::now();
        auto m = w.look();
        if (!m) return std::unexpected(std::move(m).error());
        if (*m) {
            // The receiver may have all its bytes before this side has every acknowledgement.
            if (!std::holds_alternative<bs::Outcome>(**m) || s.outcome)
                return std::unexpected(unexpected_message(s, **m, mine.path));
            s.outcome = std::get<bs::Outcome>(std::move(**m));
        }
        if (w.grace_over())
            return std::unexpected(
                no_verdict(s, w, how_far(mine.path, bytes, chunks.bytes, "sent"), sent - done, "send"));
        if (!w.gone() && Clock::now() - last_progress > stall_after)
            return std::unexpected(stalled(s, how_far(mine.path, bytes, chunks.bytes, "sent")));
    }
    return Moved{bytes, since(start)};
}

rig::Result<Moved> push_receive(Session& s, Opened& mine, const Progress& progress) {
    const Chunks chunks = s.chunks();
    const std::uint64_t n = chunks.count();
    const rig::gpu::Gpu& gpu = *s.side().gpu;
    std::uint64_t posted = 0, done = 0, bytes = 0;
    auto post = [&] {
        while (
            posted < n && posted - done < s.depth() &&
            s.qp->post(rig::bnxt::Recv{
                .region = &mine.region(), .offset = mine.at(posted, s), .bytes = chunks.length(posted), .id = posted}))
            ++posted;
    };
    post();  // before Ready: no send meets an empty receive queue
    if (auto r = s.peer.send(bs::Ready{wire_path(mine.path)}); !r) return std::unexpected(std::move(r).error());
    std::array<Completion, 32> out;
    Watch w(s, Work::None);
    auto last_progress = Clock::now();
    const auto start = Clock::now();
    while (done < n) {
        auto got = s.cq->wait(out, wait_slice);
        if (!got) return rig::fail(s.side().name(), ": ", got.error());
        for (std::size_t k = 0; k < *got; ++k) {
            if (auto r = check_completion(out[k], s.side(), "receive", chunks, true); !r)
                return std::unexpected(r.error() + " (peer " + s.peer_name() + ")");
            const std::uint64_t i = out[k].id;
            if (mine.path == Path::Bounce) {
                auto r = gpu.copy_from_host(mine.staging->host, mine.at(i, s), *s.buffer, chunks.offset(i),
                                            chunks.length(i));
                if (!r) return rig::fail(s.side().name(), ": ", r.error());
            }
            ++done;
            bytes += out[k].bytes;
            if (progress) progress(bytes);
        }
        if (*got > 0) {
            post();
            last_progress = Clock::now();
        }
        auto m = w.look();
        const std::string far = how_far(mine.path, bytes, chunks.bytes, "arrived");
        if (!m)
            return rig::fail(m.error(), ", ", far, " (", std::to_string(posted - done),
                             " receives posted, which a receiver's queue pair never completes on its own)");
        if (*m) return std::unexpected(unexpected_message(s, **m, mine.path));
        if (Clock::now() - last_progress > stall_after) return std::unexpected(stalled(s, far));
    }
    return Moved{bytes, since(start)};
}

rig::Result<Moved> pull_serve(Session& s, Opened& mine, const Progress& progress) {
    const Chunks chunks = s.chunks();
    const std::uint64_t n = chunks.count();
    const rig::gpu::Gpu& gpu = *s.side().gpu;
    const bool bounce = mine.path == Path::Bounce;
    std::uint64_t staged = bounce ? 0 : n, consumed = 0;
    Watch w(s, Work::None);
    auto last_progress = Clock::now();
    const auto start = Clock::now();
    while (consumed < n) {
        if (bounce && staged < n && staged < consumed + s.depth()) {
            for (; staged < n && staged < consumed + s.depth(); ++staged) {
                auto r = gpu.copy_to_host(*s.buffer, chunks.offset(staged), mine.staging->host, mine.at(staged, s),
                                          chunks.length(staged));
                if (!r) return rig::fail(s.side().name(), ": ", r.error());
            }
            if (auto r = w.send(bs::Staged{wire_path(mine.path), staged}); !r)
                return std::unexpected(std::move(r).error());
        }
        const std::uint64_t read = std::min(consumed * chunks.chunk, chunks.bytes);
        auto m = w.look(wait_slice * 4);
        if (!m) return rig::fail(m.error(), ", ", how_far(mine.path, read, chunks.bytes, "read by the peer"));
        if (!*m) {
            if (Clock::now() - last_progress > stall_after)
                return std::unexpected(stalled(s, how_far(mine.path, read, chunks.bytes, "read by the peer")));
            continue;
        }
        if (!std::holds_alternative<bs::Consumed>(**m)) return std::unexpected(unexpected_message(s, **m, mine.path));
        auto c = count_of(s, "consumed", std::get<bs::Consumed>(**m).chunks, consumed, staged);
        if (!c) return std::unexpected(std::move(c).error());
        consumed = *c;
        last_progress = Clock::now();
        if (progress) progress(std::min(consumed * chunks.chunk, chunks.bytes));
    }
    return Moved{chunks.bytes, since(start)};
}

rig::Result<Moved> pull_read(Session& s, Opened& mine, const bs::PathOpen& theirs, const Progress& progress) {
    const Chunks chunks = s.chunks();
    const std::uint64_t n = chunks.count();
    const bool bounce = mine.path == Path::Bounce;
    const std::uint64_t needed = bounce ? chunks.chunk * s.depth() : chunks.bytes;
    if (theirs.regions.size() != 1 || theirs.regions[0].bytes < needed)
        return rig::fail(
            s.peer_name(), ": offered ", std::to_string(theirs.regions.size()), " region(s)",
            theirs.regions.empty() ? std::string() : " of " + std::to_string(theirs.regions[0].bytes) + " bytes",
            " to read the ", to_string(mine.path), " path from, where one of ", std::to_string(needed),
            " bytes is needed");
    const rig::bnxt::Remote remote = theirs.regions[0].remote;
    const rig::gpu::Gpu& gpu = *s.side().gpu;
    const std::uint32_t depth = std::min(s.depth(), s.read_depth);
    std::uint64_t staged = bounce ? 0 : n, posted = 0, done = 0, reported = 0, bytes = 0;
    std::array<Completion, 32> out;
    Watch w(s, Work::InFlight);
    auto last_progress = Clock::now();
    auto last_report = Clock::now();
    const auto start = Clock::now();
    while (done < n) {
        bool moved = false;
        while (posted < staged && posted - done < depth) {
            const std::uint64_t from = bounce ? (posted % s.depth()) * chunks.chunk : chunks.offset(posted);
            if (!s.qp->post(rig::bnxt::Read{.region = &mine.region(),
                                            .offset = mine.at(posted, s),
                                            .bytes = chunks.length(posted),
                                            .remote = {remote.address + from, remote.rkey},
                                            .id = posted}))
                break;
            ++posted;
            moved = true;
        }
        std::size_t got = 0;
        if (moved) {
            got = s.cq->poll(out);
        } else if (posted > done) {
            auto waited = s.cq->wait(out, wait_slice);
            if (!waited) return rig::fail(s.side().name(), ": ", waited.error());
            got = *waited;
        }
        for (std::size_t k = 0; k < got; ++k) {
            if (auto r = check_completion(out[k], s.side(), "read", chunks, true); !r)
                return std::unexpected(requester_error(s, std::move(r).error(), out[k], w));
            const std::uint64_t i = out[k].id;
            if (bounce) {
                auto r = gpu.copy_from_host(mine.staging->host, mine.at(i, s), *s.buffer, chunks.offset(i),
                                            chunks.length(i));
                if (!r) return rig::fail(s.side().name(), ": ", r.error());
            }
            ++done;
            bytes += out[k].bytes;
            if (progress) progress(bytes);
        }
        if (moved || got > 0) last_progress = Clock::now();
        // The sender learns of every slot freed at once (bounce), of progress now and then (p2p).
        if (done > reported && (bounce || done == n || Clock::now() - last_report > report_every)) {
            if (auto r = w.send(bs::Consumed{wire_path(mine.path), done}); !r)
                return std::unexpected(std::move(r).error());
            reported = done;
            last_report = Clock::now();
        }
        // Nothing in flight and nothing staged to read: the next step is the sender's.
        const bool idle = posted == done && posted == staged && done < n;
        const std::string far = how_far(mine.path, bytes, chunks.bytes, "read");
        if (idle && w.gone()) return std::unexpected(w.error() + ", " + far);
        auto m = w.look(idle ? wait_slice * 4 : std::chrono::milliseconds{});
        if (!m) return std::unexpected(std::move(m).error());
        if (*m) {
            if (!bounce || !std::holds_alternative<bs::Staged>(**m))
                return std::unexpected(unexpected_message(s, **m, mine.path));
            auto c = count_of(s, "staged", std::get<bs::Staged>(**m).chunks, staged, std::min(n, done + s.depth()));
            if (!c) return std::unexpected(std::move(c).error());
            staged = *c;
            last_progress = Clock::now();
        }
        if (w.grace_over()) return std::unexpected(no_verdict(s, w, far, posted - done, "read"));
        if (!w.gone() && Clock::now() - last_progress > stall_after) return std::unexpected(stalled(s, far));
    }
    return Moved{bytes, since(start)};
}

}  // namespace p2p_copy
