// DatagramCable (datagram.hpp): a port's frames over a UDP socket, one Ethernet frame per
// datagram, as QEMU's net/dgram.c and net/socket.c (udp=) frame them: the datagram's
// payload is the frame from its destination MAC on, with no header of its own and no FCS.
// It sends on the model's thread (forward to end 1, in sendmmsg batches) and receives on
// a thread of its own (recvmmsg batches into frame buffers of the cable's pool, handed to
// carry from end 1 and so into the port's inbox).
#include "rig/bnxt/sim/datagram.hpp"

#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <system_error>
#include <thread>

#include "cable.hpp"
#include "impl.hpp"

namespace rig::bnxt::sim {

using detail::Frame;

namespace {

// A UDP endpoint as the socket calls take it, and its text: "192.0.2.1:4791" or
// "[2001:db8::1]:4791" (RFC 3986 section 3.2.2 brackets an IPv6 literal; a zone follows
// its '%', as in "[fe80::1%eth0]:4791"). Numeric addresses only, through getaddrinfo with
// AI_NUMERICHOST | AI_NUMERICSERV and getnameinfo with NI_NUMERICHOST: nothing is looked up.
struct SocketAddress {
    sockaddr_storage storage{};
    socklen_t length = 0;

    ::sockaddr* sockaddr() { return reinterpret_cast<::sockaddr*>(&storage); }
    const ::sockaddr* sockaddr() const { return reinterpret_cast<const ::sockaddr*>(&storage); }
    std::uint16_t port() const;
    bool unspecified() const;  // 0.0.0.0 or ::
};

rig::Result<SocketAddress> not_an_address(std::string_view text) {
    return rig::fail("'", text, "': not an IPv4 or IPv6 address and port (127.0.0.1:4791, [::1]:4791)");
}

std::uint16_t SocketAddress::port() const {
    if (storage.ss_family == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in&>(storage).sin_port);
    return ntohs(reinterpret_cast<const sockaddr_in6&>(storage).sin6_port);
}

bool SocketAddress::unspecified() const {
    if (storage.ss_family == AF_INET)
        return reinterpret_cast<const sockaddr_in&>(storage).sin_addr.s_addr == INADDR_ANY;
    const in6_addr& a = reinterpret_cast<const sockaddr_in6&>(storage).sin6_addr;
    return IN6_IS_ADDR_UNSPECIFIED(&a);
}

// Error: "'TEXT': not an IPv4 or IPv6 address and port (...)", naming the text.
rig::Result<SocketAddress> parse_socket_address(std::string_view text) {
    std::string_view host, port;
    if (text.starts_with('[')) {
        const auto close = text.find("]:");
        if (close == std::string_view::npos) return not_an_address(text);
        host = text.substr(1, close - 1);
        port = text.substr(close + 2);
    } else {
        const auto colon = text.rfind(':');
        if (colon == std::string_view::npos) return not_an_address(text);
        host = text.substr(0, colon);
        port = text.substr(colon + 1);
        if (host.find(':') != std::string_view::npos) return not_an_address(text);  // IPv6 without brackets
    }
    unsigned number = 0;
    const auto [end, error] = std::from_chars(port.data(), port.data() + port.size(), number);
    if (host.empty() || port.empty() || error != std::errc() || end != port.data() + port.size() || number > 65535)
        return not_an_address(text);
    addrinfo hints{};
    hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
    hints.ai_socktype = SOCK_DGRAM;
    hints.ai_family = text.starts_with('[') ? AF_INET6 : AF_INET;
    addrinfo* found = nullptr;
    const std::string host_text(host), port_text(port);
    if (::getaddrinfo(host_text.c_str(), port_text.c_str(), &hints, &found) != 0 || found == nullptr)
        return not_an_address(text);
    SocketAddress a;
    std::memcpy(&a.storage, found->ai_addr, found->ai_addrlen);
    a.length = found->ai_addrlen;
    ::freeaddrinfo(found);
    return a;
}

std::string to_string(const SocketAddress& address) {
    char host[NI_MAXHOST] = {};
    if (::getnameinfo(address.sockaddr(), address.length, host, sizeof host, nullptr, 0, NI_NUMERICHOST) != 0)
        return "(no address)";
    const std::string port = std::to_string(address.port());
    return address.storage.ss_family == AF_INET6 ? "[" + std::string(host) + "]:" + port
                                                 : std::string(host) + ":" + port;
}

// Whether a source a socket call filled in (`length` bytes of `source`) is `address`:
// family, port and address (and an IPv6 zone) alike.
bool same_address(const sockaddr_storage& source, socklen_t length, const SocketAddress& address) {
    if (length < sizeof(sa_family_t) || source.ss_family != address.storage.ss_family) return false;
    if (source.ss_family == AF_INET) {
        const auto& s = reinterpret_cast<const sockaddr_in&>(source);
        const auto& a = reinterpret_cast<const sockaddr_in&>(address.storage);
        return length >= sizeof(sockaddr_in) && s.sin_port == a.sin_port && s.sin_addr.s_addr == a.sin_addr.s_addr;
    }
    const auto& s = reinterpret_cast<const sockaddr_in6&>(source);
    const auto& a = reinterpret_cast<const sockaddr_in6&>(address.storage);
    return length >= sizeof(sockaddr_in6) && s.sin6_port == a.sin6_port && s.sin6_scope_id == a.sin6_scope_id &&
           std::memcmp(&s.sin6_addr, &a.sin6_addr, sizeof s.sin6_addr) == 0;
}

// Datagrams per sendmmsg and recvmmsg: the most frames one step sends at once (port.cpp).
constexpr unsigned batch = 64;
// Asked of the kernel for each direction's socket buffer (it doubles the value, socket(7)):
// what is in flight towards a port at once, each datagram charged about twice its bytes
// on loopback. Sends are windowed (256 packets of 4 KiB a QP); the responses to 16 reads
// of 1 MiB (the initiator depth) are not, and a receive buffer of 4 MiB lost some of them.
constexpr int socket_buffer_bytes = 32 << 20;
// Committed at bind, as Wire commits its ports' buffers (cable.cpp): what the receive
// thread fills while the port holds the 1024 spares it keeps.
constexpr std::size_t pool_first = 2048;
constexpr std::size_t ethernet_header_bytes = 14;
// How long the receive thread looks for more datagrams before it sleeps in poll, as the
// model's worker spins for its next event (nic.cpp): a wakeup through the kernel costs
// more than the gaps between a transfer's batches.
constexpr auto spin_most = std::chrono::microseconds(50);

std::string errno_text(int error) { return std::system_category().message(error); }

struct Counting {
    std::atomic<std::uint64_t> datagrams_sent{0}, datagrams_received{0}, not_ethernet{0}, foreign{0},
        receive_overflows{0}, send_failures{0}, unplugged{0};
};

struct DatagramLink final : Cable::Link {
    ~DatagramLink() override {
        if (fd >= 0) ::close(fd);
        if (stop_fd >= 0) ::close(stop_fd);
    }

    std::size_t forward(unsigned to, std::vector<Frame>& frames) override {
        if (to == 0) return deliver_to(0, frames);
        if (!connected.load(std::memory_order_acquire)) return frames.size();
        for (std::size_t first = 0; first < frames.size(); first += batch)
            send(std::span(frames).subspan(first, std::min<std::size_t>(batch, frames.size() - first)));
        return 0;
    }

    // On the model's thread (one step at a time: the scratch arrays are its).
    void send(std::span<Frame> frames) {
        const auto n = static_cast<unsigned>(frames.size());
        for (unsigned i = 0; i < n; ++i) {
            send_iov[i] = {frames[i].data(), frames[i].size()};
            send_msgs[i] = {};
            send_msgs[i].msg_hdr.msg_iov = &send_iov[i];
            send_msgs[i].msg_hdr.msg_iovlen = 1;
        }
        unsigned sent = 0, failed = 0;
        int tries = 0;  // of the datagram at `sent + failed`
        while (sent + failed < n) {
            const int r = ::sendmmsg(fd, &send_msgs[sent + failed], n - sent - failed, 0);
            if (r > 0) {
                sent += static_cast<unsigned>(r);
                tries = 0;
                continue;
            }
            const int error = errno;
            if (error == EINTR) continue;
            last_error.store(error, std::memory_order_relaxed);
            // ECONNREFUSED reports an ICMP port unreachable an earlier datagram met, and
            // clears it: this one is sent once more. Otherwise it is lost.
            if (error == ECONNREFUSED && ++tries < 2) continue;
            ++failed;
            tries = 0;
        }
        count.datagrams_sent.fetch_add(sent, std::memory_order_relaxed);
        if (failed > 0) count.send_failures.fetch_add(failed, std::memory_order_relaxed);
    }

    // The receive thread: waits for datagrams (or stop_fd), then takes them until none
    // came for spin_most. (Measured against the model's worker taking them while it spins
    // for its next event, with this thread only for a sleeping worker: no faster, since
    // the thread still woke for each burst.)
    void receive() {
        for (;;) {
            pollfd fds[2] = {{fd, POLLIN, 0}, {stop_fd, POLLIN, 0}};
            if (::poll(fds, 2, -1) < 0 && errno != EINTR) return;
            if (fds[1].revents != 0) return;
            auto spin_until = std::chrono::steady_clock::now() + spin_most;
            while (!stopping.load(std::memory_order_relaxed)) {
                if (receive_batch() > 0) {
                    spin_until = std::chrono::steady_clock::now() + spin_most;
                } else if (std::chrono::steady_clock::now() > spin_until) {
                    break;
                } else {
                    std::this_thread::yield();  // a thread with work on this core goes first
                }
            }
        }
    }

    // One recvmmsg of up to `batch` datagrams, on the receive thread: drops what is no
    // frame of the remote peer and carries the rest. The datagrams taken; 0 where none
    // waited (or on an error, recorded).
    unsigned receive_batch() {
        for (unsigned i = 0; i < batch; ++i) {
            if (slots[i].capacity() == 0) {
                if (spares.empty()) take_spares(spares, batch);
                if (!spares.empty()) {
                    slots[i] = std::move(spares.back());
                    spares.pop_back();
                }
            }
            slots[i].resize(detail::max_frame_bytes);
            iov[i] = {slots[i].data(), slots[i].size()};
            msgs[i].msg_hdr = {};
            msgs[i].msg_hdr.msg_iov = &iov[i];
            msgs[i].msg_hdr.msg_iovlen = 1;
            msgs[i].msg_hdr.msg_name = &sources[i];
            msgs[i].msg_hdr.msg_namelen = sizeof(sockaddr_storage);
            msgs[i].msg_hdr.msg_control = controls[i].data();
            msgs[i].msg_hdr.msg_controllen = controls[i].size();
        }
        const int r = ::recvmmsg(fd, msgs.data(), batch, MSG_DONTWAIT, nullptr);
        if (r < 0) {
            const int error = errno;
            if (error != EAGAIN && error != EWOULDBLOCK && error != EINTR)
                last_error.store(error, std::memory_order_relaxed);  // ECONNREFUSED: an ICMP port unreachable
            return error == ECONNREFUSED || error == EINTR ? 1 : 0;  // look again at once
        }
        const auto n = static_cast<unsigned>(r);
        for (unsigned i = 0; i < n; ++i) {
            const msghdr& h = msgs[i].msg_hdr;
            if ((h.msg_flags & MSG_TRUNC) != 0 || msgs[i].msg_len < ethernet_header_bytes) {
                count.not_ethernet.fetch_add(1, std::memory_order_relaxed);
            } else if (!same_address(sources[i], h.msg_namelen, remote_address)) {
                count.foreign.fetch_add(1, std::memory_order_relaxed);
            } else {
                slots[i].resize(msgs[i].msg_len);
                got.push_back(std::move(slots[i]));
                slots[i] = Frame();
            }
        }
        if (n > 0) note_overflows(msgs[n - 1].msg_hdr);
        if (!got.empty()) {
            last_error.store(0, std::memory_order_relaxed);  // the peer lives
            const std::size_t received = got.size();
            if (const std::size_t lost = carry(1, got); lost > 0)
                count.unplugged.fetch_add(lost, std::memory_order_relaxed);
            // Counted once the port has them, so that a reader of the counters finds
            // them in the port's inbox.
            count.datagrams_received.fetch_add(received, std::memory_order_relaxed);
            for (Frame& f : got) spares.push_back(std::move(f));  // what the port did not take
            got.clear();
        }
        return n;
    }

    // SO_RXQ_OVFL: each datagram carries the socket's count of datagrams dropped so far.
    void note_overflows(const msghdr& h) {
        for (const cmsghdr* c = CMSG_FIRSTHDR(&h); c != nullptr;
             c = CMSG_NXTHDR(const_cast<msghdr*>(&h), const_cast<cmsghdr*>(c))) {
            if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SO_RXQ_OVFL) continue;
            std::uint32_t drops = 0;
            std::memcpy(&drops, CMSG_DATA(c), sizeof drops);
            std::uint64_t seen = count.receive_overflows.load(std::memory_order_relaxed);
            while (drops > seen &&
                   !count.receive_overflows.compare_exchange_weak(seen, drops, std::memory_order_relaxed)) {}
        }
    }

    void stop() {
        if (!receiver.joinable()) return;
        stopping.store(true, std::memory_order_relaxed);
        const std::uint64_t one = 1;
        (void)!::write(stop_fd, &one, sizeof one);
        receiver.join();
    }

    int fd = -1;
    int stop_fd = -1;  // eventfd: the receive thread's stop
    SocketAddress local_address, remote_address;
    std::string local_text;
    std::mutex connect_mutex;  // connect, and remote_text
    std::string remote_text;
    std::atomic<bool> connected{false};
    std::thread receiver;
    std::atomic<bool> stopping{false};
    Counting count;
    std::atomic<int> last_error{0};  // errno of the last failed send or receive; 0 since a datagram came
    std::array<mmsghdr, batch> send_msgs{};
    std::array<iovec, batch> send_iov{};

    // The receive thread's: buffers the next datagrams land in, and their headers.
    std::array<Frame, batch> slots;
    std::array<mmsghdr, batch> msgs{};
    std::array<iovec, batch> iov{};
    std::array<sockaddr_storage, batch> sources{};
    alignas(cmsghdr) std::array<std::array<std::byte, CMSG_SPACE(sizeof(std::uint32_t))>, batch> controls{};
    std::vector<Frame> spares, got;
};

DatagramLink& datagram(const std::shared_ptr<Cable::Link>& link) { return static_cast<DatagramLink&>(*link); }

void set_buffer(int fd, int force, int plain) {
    // SO_*BUFFORCE passes net.core.[rw]mem_max where the process has CAP_NET_ADMIN; the
    // kernel doubles the value either way (socket(7)).
    if (::setsockopt(fd, SOL_SOCKET, force, &socket_buffer_bytes, sizeof socket_buffer_bytes) != 0)
        (void)::setsockopt(fd, SOL_SOCKET, plain, &socket_buffer_bytes, sizeof socket_buffer_bytes);
}

}  // namespace

DatagramCable::DatagramCable(std::shared_ptr<Link> link) : Cable(std::move(link)) {}

DatagramCable::~DatagramCable() { datagram(link_).stop(); }

rig::Result<std::unique_ptr<DatagramCable>> DatagramCable::bind(Model& nic, std::string_view local) {
    auto address = parse_socket_address(local);
    if (!address) return rig::fail("udp local address ", address.error());
    auto link = std::make_shared<DatagramLink>();
    link->local_address = *address;
    link->fd = ::socket(address->storage.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (link->fd < 0) return rig::fail("udp ", local, ": socket: ", errno_text(errno));
    if (::bind(link->fd, address->sockaddr(), address->length) != 0) {
        const int error = errno;
        const char* why = error == EADDRINUSE      ? "the port is in use"
                          : error == EADDRNOTAVAIL ? "not an address of this host"
                          : error == EACCES        ? "a privileged port"
                                                   : "cannot bind";
        return rig::fail("udp ", local, ": ", why, " (bind: ", errno_text(error), ")");
    }
    socklen_t length = sizeof link->local_address.storage;
    ::getsockname(link->fd, link->local_address.sockaddr(), &length);
    link->local_address.length = length;
    link->local_text = to_string(link->local_address);
    set_buffer(link->fd, SO_RCVBUFFORCE, SO_RCVBUF);
    set_buffer(link->fd, SO_SNDBUFFORCE, SO_SNDBUF);
    const int on = 1;
    (void)::setsockopt(link->fd, SOL_SOCKET, SO_RXQ_OVFL, &on, sizeof on);
    link->stop_fd = ::eventfd(0, EFD_CLOEXEC);
    if (link->stop_fd < 0) return rig::fail("udp ", link->local_text, ": eventfd: ", errno_text(errno));
    link->commit_pool(pool_first);
    std::unique_ptr<DatagramCable> cable(new DatagramCable(link));
    link->plug({impl(nic), nullptr});
    return cable;
}

rig::Result<void> DatagramCable::connect(std::string_view remote) {
    DatagramLink& l = datagram(link_);
    auto address = parse_socket_address(remote);
    if (!address) return rig::fail("udp remote address ", address.error());
    const std::string text = to_string(*address);
    if (address->port() == 0) return rig::fail("udp remote address ", text, ": port 0 is no peer's");
    if (address->unspecified()) return rig::fail("udp remote address ", text, ": the unspecified address is no peer's");
    if (address->storage.ss_family != l.local_address.storage.ss_family)
        return rig::fail("udp remote address ", text, ": not of the family of the local address ", l.local_text);
    std::lock_guard lock(l.connect_mutex);
    if (l.connected.load()) throw std::logic_error("DatagramCable::connect: connected already");
    if (::connect(l.fd, address->sockaddr(), address->length) != 0)
        return rig::fail("udp ", l.local_text, " -> ", text, ": connect: ", errno_text(errno));
    l.remote_address = *address;
    l.remote_text = text;
    l.receiver = std::thread([&l] { l.receive(); });
    l.connected.store(true, std::memory_order_release);
    return {};
}

rig::Result<std::unique_ptr<DatagramCable>> DatagramCable::open(Model& nic, std::string_view local,
                                                                std::string_view remote) {
    auto cable = bind(nic, local);
    if (!cable) return cable;
    if (auto r = (*cable)->connect(remote); !r) return std::unexpected(std::move(r).error());
    return cable;
}

std::string DatagramCable::local() const { return datagram(link_).local_text; }

std::string DatagramCable::remote() const {
    DatagramLink& l = datagram(link_);
    std::lock_guard lock(l.connect_mutex);
    return l.remote_text;
}

DatagramCable::Counters DatagramCable::counters() const {
    const Counting& c = datagram(link_).count;
    auto get = [](const std::atomic<std::uint64_t>& v) { return v.load(std::memory_order_relaxed); };
    return {get(c.datagrams_sent),    get(c.datagrams_received), get(c.not_ethernet), get(c.foreign),
            get(c.receive_overflows), get(c.send_failures),      get(c.unplugged)};
}

rig::Result<void> DatagramCable::status() const {
    DatagramLink& l = datagram(link_);
    const int error = l.last_error.load(std::memory_order_relaxed);
    if (error == 0) return {};
    const std::string ends = "udp " + l.local_text + " -> " + remote();
    if (error == ECONNREFUSED)
        return rig::fail(ends, ": the peer refused datagrams (ICMP port unreachable: nothing is bound at ", remote(),
                         ")");
    return rig::fail(ends, ": ", errno_text(error));
}

}  // namespace rig::bnxt::sim
