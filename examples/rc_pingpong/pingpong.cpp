// rc_pingpong's ping-pong of SENDs on rig's driver (pingpong.hpp).
#include "pingpong.hpp"

#include <sys/time.h>

#include <array>
#include <cstdio>
#include <vector>

namespace rc_pingpong {
namespace {

// rc_pingpong's clock: gettimeofday, in microseconds.
double now_usec() {
    timeval t{};
    ::gettimeofday(&t, nullptr);
    return static_cast<double>(t.tv_sec) * 1e6 + static_cast<double>(t.tv_usec);
}

class Sender {
public:
    Sender(rig::bnxt::Qp& qp, const rig::bnxt::Region& buffer, const Loop& loop)
        : qp_(qp), buffer_(buffer), size_(loop.size), inline_(loop.size <= loop.max_inline) {
        if (inline_) bytes_.resize(loop.size);
    }
    // pp_post_send: one signalled SEND of the whole buffer.
    bool post() {
        if (!inline_) return qp_.post(rig::bnxt::Send{.region = &buffer_, .bytes = size_, .id = send_wrid});
        buffer_.read(0, bytes_);  // the buffer as the last receive left it
        return qp_.post(rig::bnxt::Send{.id = send_wrid, .inline_data = bytes_});
    }

private:
    rig::bnxt::Qp& qp_;
    const rig::bnxt::Region& buffer_;
    std::uint32_t size_;
    bool inline_;
    std::vector<std::byte> bytes_;
};

}  // namespace

std::uint32_t post_receives(rig::bnxt::Qp& qp, const rig::bnxt::Region& buffer, std::uint32_t size, std::uint32_t n) {
    std::uint32_t i = 0;
    for (; i < n; ++i)
        if (!qp.post(rig::bnxt::Recv{.region = &buffer, .bytes = size, .id = recv_wrid})) break;
    return i;
}

rig::Result<double> ping_pong(rig::bnxt::Qp& qp, rig::bnxt::Cq& cq, const rig::bnxt::Region& buffer, const Loop& loop) {
    Sender sender(qp, buffer, loop);
    std::uint32_t routs = loop.rx_depth;
    std::uint64_t pending = recv_wrid;
    if (loop.role == Role::Client) {
        if (!sender.post()) return rig::fail("Couldn't post send");
        pending |= send_wrid;
    }
    const double start = now_usec();
    std::uint32_t rcnt = 0, scnt = 0;
    std::array<rig::bnxt::Completion, 2> wc;
    while (rcnt < loop.iters || scnt < loop.iters) {
        auto ne = cq.wait(wc, loop.stall);
        if (!ne) return rig::fail("poll CQ failed: ", ne.error());
        if (*ne == 0)
            return rig::fail("no completion in ", std::to_string(loop.stall.count()), " ms (", std::to_string(scnt),
                             " sent, ", std::to_string(rcnt), " received of ", std::to_string(loop.iters), ")");
        for (std::size_t i = 0; i < *ne; ++i) {
            const rig::bnxt::Completion& c = wc[i];
            if (!c.ok())
                return rig::fail("Failed status ", rig::bnxt::to_string(c.status), " (", std::to_string(c.code),
                                 ") for wr_id ", std::to_string(c.id));
            if (c.id == send_wrid) {
                ++scnt;
            } else if (c.id == recv_wrid) {
                if (--routs <= 1) {
                    routs += post_receives(qp, buffer, loop.size, loop.rx_depth - routs);
                    if (routs < loop.rx_depth) return rig::fail("Couldn't post receive (", std::to_string(routs), ")");
                }
                ++rcnt;
            } else {
                return rig::fail("Completion for unknown wr_id ", std::to_string(c.id));
            }
            pending &= ~c.id;
            if (scnt < loop.iters && pending == 0) {
                if (!sender.post()) return rig::fail("Couldn't post send");
                pending = recv_wrid | send_wrid;
            }
        }
    }
    return now_usec() - start;
}

std::string report(std::uint32_t size, std::uint32_t iters, double elapsed) {
    // As rc_pingpong: float microseconds, long long bytes.
    const float usec = static_cast<float>(elapsed);
    const long long bytes = static_cast<long long>(size) * iters * 2;
    char text[256];
    const int n = std::snprintf(text, sizeof text, "%lld bytes in %.2f seconds = %.2f Mbit/sec\n", bytes,
                                usec / 1000000., static_cast<double>(bytes) * 8. / usec);
    std::snprintf(text + n, sizeof text - static_cast<std::size_t>(n), "%d iters in %.2f seconds = %.2f usec/iter\n",
                  static_cast<int>(iters), usec / 1000000., usec / static_cast<float>(iters));
    return text;
}

}  // namespace rc_pingpong
