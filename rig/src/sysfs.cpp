// Reading sysfs under a root (sysfs.hpp). Nothing here follows a path outside the root,
// trusts a file's size, or walks without a bound: a malformed tree gives an Error that
// names the file, never a hang or a crash.
#include "sysfs.hpp"

#include <fmt/format.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cerrno>
#include <cstring>
#include <deque>
#include <system_error>

namespace rig::pci::sysfs {
namespace {

// Linux's own limit on nested links (MAXSYMLINKS, fs/namei.c).
constexpr int max_links = 40;
// A sysfs attribute is at most a page; cpuinfo of a large machine is bigger.
constexpr std::size_t max_text = 1 << 20;
// No PCI hierarchy is deeper than its 256 bus numbers.
constexpr int max_depth = 256;

std::string why(const std::error_code& ec) { return ec.message(); }

// A decimal number of cpuinfo ("23"), up to six digits; nullopt for anything else.
std::optional<unsigned> decimal(std::string_view value) {
    if (value.empty() || value.size() > 6) return std::nullopt;
    unsigned n = 0;
    for (char c : value) {
        if (c < '0' || c > '9') return std::nullopt;
        n = n * 10 + static_cast<unsigned>(c - '0');
    }
    return n;
}

}  // namespace

Result<fs::path> resolve(const fs::path& root, const fs::path& path) {
    std::vector<fs::path> done;  // resolved components below root
    std::deque<fs::path> todo(path.begin(), path.end());
    int links = 0;
    while (!todo.empty()) {
        const fs::path part = todo.front();
        todo.pop_front();
        if (part.empty() || part == "." || part == "/" || part.has_root_name()) continue;
        if (part == "..") {
            if (!done.empty()) done.pop_back();
            continue;
        }
        fs::path here = root;
        for (const auto& d : done) here /= d;
        here /= part;
        std::error_code ec;
        const auto status = fs::symlink_status(here, ec);
        if (ec || !fs::exists(status)) return fail((root / path).string(), ": ", here.string(), " does not exist");
        if (!fs::is_symlink(status)) {
            done.push_back(part);
            continue;
        }
        if (++links > max_links) return fail((root / path).string(), ": too many levels of symbolic links");
        const fs::path target = fs::read_symlink(here, ec);
        if (ec) return fail(here.string(), ": cannot read the link: ", why(ec));
        if (target.is_absolute()) done.clear();
        todo.insert(todo.begin(), target.begin(), target.end());
    }
    fs::path out = root;
    for (const auto& d : done) out /= d;
    return out;
}

Result<std::string> read_file(const fs::path& file, std::size_t max, Longer longer) {
    // O_NOFOLLOW: a link in place of the file is refused, not followed out of the root;
    // O_NONBLOCK: opening a FIFO does not wait for a writer (fstat then refuses it).
    const int fd = ::open(file.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ELOOP)
            return fail(file.string(),
                        ": is a symbolic link, not a file (sysfs attributes are files; a link may leave the root)");
        return fail(file.string(), ": cannot open: ", std::strerror(errno));
    }
    struct Closer {
        int fd;
        ~Closer() { ::close(fd); }
    } closer{fd};
    struct stat st {};
    if (::fstat(fd, &st) != 0) return fail(file.string(), ": cannot stat: ", std::strerror(errno));
    if (!S_ISREG(st.st_mode)) return fail(file.string(), ": not a regular file");
    std::string text;
    char buffer[4096];
    while (text.size() <= max) {
        const ssize_t n = ::read(fd, buffer, std::min(sizeof buffer, max + 1 - text.size()));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return fail(file.string(), ": cannot read: ", std::strerror(errno));
        if (n == 0) break;
        text.append(buffer, static_cast<std::size_t>(n));
    }
    if (text.size() > max) {
        if (longer == Longer::Error) return fail(file.string(), ": longer than ", std::to_string(max), " bytes");
        text.resize(max);
    }
    return text;
}

Result<std::string> read_text(const fs::path& file) { return read_file(file, max_text, Longer::Error); }

Result<std::uint32_t> read_hex(const fs::path& file, std::uint32_t max) {
    auto text = read_text(file);
    if (!text) return std::unexpected(std::move(text).error());
    std::string_view s = *text;
    if (!s.empty() && s.back() == '\n') s.remove_suffix(1);
    const auto malformed = [&] {
        return fail(file.string(), ": \"", std::string(s.substr(0, 32)), "\" is not a number up to ",
                    fmt::format("{:#x}", max));
    };
    if (s.size() < 3 || s.size() > 10 || s[0] != '0' || s[1] != 'x') return malformed();
    std::uint64_t value = 0;
    for (char c : s.substr(2)) {
        int digit;
        if (c >= '0' && c <= '9') digit = c - '0';
        else if (c >= 'a' && c <= 'f') digit = c - 'a' + 10;
        else return malformed();
        value = value << 4 | static_cast<std::uint64_t>(digit);
    }
    if (value > max) return malformed();
    return static_cast<std::uint32_t>(value);
}

std::optional<int> read_int(const fs::path& file) {
    auto text = read_text(file);
    if (!text) return std::nullopt;
    std::string_view s = *text;
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.remove_suffix(1);
    int value = 0;
    const auto [end, error] = std::from_chars(s.data(), s.data() + s.size(), value);
    if (error != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
    return value;
}

std::optional<std::string> link_name(const fs::path& link) {
    std::error_code ec;
    if (!fs::is_symlink(fs::symlink_status(link, ec)) || ec) return std::nullopt;
    const fs::path target = fs::read_symlink(link, ec);
    if (ec || target.filename().empty()) return std::nullopt;
    return target.filename().string();
}

Result<std::vector<std::uint8_t>> read_config(const fs::path& dir) {
    auto text = read_file(dir / "config", config::express_bytes, Longer::Truncate);
    if (!text) return std::unexpected(std::move(text).error());
    std::vector<std::uint8_t> bytes(text->size());
    if (!bytes.empty()) std::memcpy(bytes.data(), text->data(), bytes.size());  // a 0-byte config: no copy
    return bytes;
}

Result<fs::path> function_dir(const fs::path& root, std::string_view bus) {
    if (!is_address(bus)) return fail("\"", std::string(bus), "\" is not a bus address");
    // The entry itself must be a link, as sysfs makes it (sysfs.hpp): a directory there
    // would be a function without a place in any tree.
    const fs::path entry = devices_dir(root) / std::string(bus);
    std::error_code ec;
    if (const auto status = fs::symlink_status(entry, ec); !ec && fs::exists(status) && !fs::is_symlink(status))
        return fail(std::string(bus), ": ", entry.string(),
                    " is not a symbolic link (sysfs links each function to its directory)");
    auto dir = resolve(root, fs::path("sys/bus/pci/devices") / std::string(bus));
    if (!dir) return fail(std::string(bus), ": no such function (", dir.error(), ")");
    if (!fs::is_directory(*dir, ec)) return fail(std::string(bus), ": ", dir->string(), " is not a directory");
    return dir;
}

Result<std::vector<Id>> functions(const fs::path& root) {
    std::error_code ec;
    if (!fs::exists(fs::symlink_status(root / "sys/bus/pci", ec))) return std::vector<Id>{};
    const fs::path dir = devices_dir(root);
    fs::directory_iterator it(dir, ec);
    if (ec) return fail(dir.string(), ": cannot list: ", why(ec));
    std::vector<std::pair<BusAddress, Id>> found;
    for (; it != fs::directory_iterator(); it.increment(ec)) {
        const std::string name = it->path().filename().string();
        const auto address = BusAddress::parse(name);
        if (!address) continue;
        auto function = function_dir(root, name);
        if (!function) continue;
        auto vendor = read_hex(*function / "vendor", 0xffff);
        auto device = read_hex(*function / "device", 0xffff);
        auto class_code = read_hex(*function / "class", 0xffffff);
        if (!vendor || !device || !class_code) continue;  // being removed, or malformed: left out
        found.emplace_back(
            *address, Id{name, static_cast<std::uint16_t>(*vendor), static_cast<std::uint16_t>(*device), *class_code});
    }
    if (ec) return fail(dir.string(), ": cannot list: ", why(ec));
    std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<Id> ids;
    ids.reserve(found.size());
    for (auto& [address, id] : found) ids.push_back(std::move(id));
    return ids;
}

std::optional<HostBridgeName> parse_host_bridge(std::string_view name) {
    // "pci" + a bus address's domain and bus: parse "<name without pci>:00.0".
    if (name.size() < 3 || name.substr(0, 3) != "pci") return std::nullopt;
    const auto address = BusAddress::parse(std::string(name.substr(3)) + ":00.0");
    if (!address) return std::nullopt;
    return HostBridgeName{address->domain, address->bus};
}

Link read_link(const fs::path& dir) {
    const auto text = [&](const char* name) -> std::optional<std::string> {
        auto t = read_text(dir / name);
        if (!t) return std::nullopt;
        while (!t->empty() && (t->back() == '\n' || t->back() == ' ')) t->pop_back();
        return *t;
    };
    const auto width = [&](const char* name) -> std::optional<unsigned> {
        const auto t = text(name);
        unsigned value = 0;
        if (!t || t->empty()) return std::nullopt;
        const auto [end, error] = std::from_chars(t->data(), t->data() + t->size(), value);
        if (error != std::errc() || end != t->data() + t->size() || value == 0 || value > 32) return std::nullopt;
        return value;
    };
    const auto state = [&](const char* speed, const char* lanes) -> std::optional<LinkState> {
        const auto s = text(speed);
        const auto w = width(lanes);
        const auto g = s ? parse_sysfs_speed(*s) : std::nullopt;
        if (!g || !w) return std::nullopt;
        return LinkState{*g, *w};
    };
    Link link;
    link.status = state("current_link_speed", "current_link_width");
    link.capability = state("max_link_speed", "max_link_width");
    std::error_code ec;
    if (link.status || link.capability || fs::exists(dir / "current_link_speed", ec)) link.source = LinkSource::Sysfs;
    return link;
}

namespace {

Result<Node> read_node(const fs::path& dir, std::string_view bus) {
    auto bytes = read_config(dir);
    if (!bytes) return fail(std::string(bus), ": ", bytes.error());
    auto header = parse_header(*bytes);
    if (!header) return fail(std::string(bus), ": ", (dir / "config").string(), ": ", header.error());
    Node node{std::string(bus), dir, *header, header->link(), std::string(bus)};
    // Without CAP_SYS_ADMIN the capability lies past the 64 bytes sysfs gives; the link
    // files are readable by anyone.
    if (node.link.source == LinkSource::Unread) node.link = read_link(dir);
    return node;
}

}  // namespace

Result<Way> read_way(const fs::path& root, std::string_view bus) {
    auto dir = function_dir(root, bus);
    if (!dir) return std::unexpected(std::move(dir).error());
    if (dir->filename() != bus)
        return fail(std::string(bus), ": its directory ", dir->string(), " is named for another function");
    Way way;
    auto self = read_node(*dir, bus);
    if (!self) return std::unexpected(std::move(self).error());
    way.nodes.push_back(std::move(*self));

    // pci_upstream_bridge(): an SR-IOV VF climbs from its PF (pci_physfn()).
    fs::path from = *dir;
    std::error_code ec;
    // physfn is a link to the PF's directory where sysfs makes one; anything else there
    // (a file, a FIFO) is not a physfn.
    if (fs::is_symlink(fs::symlink_status(*dir / "physfn", ec))) {
        auto pf = resolve(root, dir->lexically_relative(root) / "physfn");
        if (!pf) return fail(std::string(bus), ": its physfn link: ", pf.error());
        if (!fs::is_directory(*pf, ec))
            return fail(std::string(bus), ": its physfn link names no directory (", pf->string(), ")");
        from = *pf;
        // SR-IOV 1.1 §3.5: a VF's link registers are reserved; it uses its PF's link.
        if (auto pf_node = read_node(*pf, pf->filename().string())) {
            way.nodes[0].link = pf_node->link;
            way.nodes[0].link_owner = pf_node->bus;
        }
    }
    fs::path at = from.parent_path();
    for (int depth = 0;; ++depth) {
        const std::string name = at.filename().string();
        const fs::path below_root = at.lexically_relative(root);
        if (depth > max_depth || below_root.empty() || below_root == "." || name.empty())
            return fail(std::string(bus), ": no host bridge (pciDDDD:BB directory) above ", dir->string());
        if (parse_host_bridge(name)) {
            way.host_bridge = name;
            way.host_bridge_dir = at;
            return way;
        }
        if (!is_address(name))
            return fail(std::string(bus), ": ", at.string(), " above it is neither a bridge nor a host bridge");
        auto bridge = read_node(at, name);
        if (!bridge) return fail(std::string(bus), ": its upstream bridge ", bridge.error());
        way.nodes.push_back(std::move(*bridge));
        at = at.parent_path();
    }
}

Result<std::optional<Node>> first_device(const fs::path& host_bridge_dir) {
    const auto host = parse_host_bridge(host_bridge_dir.filename().string());
    if (!host) return fail(host_bridge_dir.string(), ": not a host bridge directory");
    std::error_code ec;
    fs::directory_iterator it(host_bridge_dir, ec);
    if (ec) return fail(host_bridge_dir.string(), ": cannot list: ", why(ec));
    std::optional<BusAddress> first;
    for (; it != fs::directory_iterator(); it.increment(ec)) {
        // A device is a directory of its own there, never a link (which could leave the root).
        std::error_code kind;
        if (!fs::is_directory(it->symlink_status(kind)) || kind) continue;
        const auto address = BusAddress::parse(it->path().filename().string());
        if (!address || address->domain != host->domain || address->bus != host->bus) continue;
        if (!first || *address < *first) first = address;
    }
    if (ec) return fail(host_bridge_dir.string(), ": cannot list: ", why(ec));
    if (!first) return std::optional<Node>{};
    const std::string bus = first->to_string();
    auto node = read_node(host_bridge_dir / bus, bus);
    if (!node) return std::unexpected(std::move(node).error());
    return std::optional<Node>{std::move(*node)};
}

Cpu read_cpu(const fs::path& root) {
    Cpu cpu;
    auto file = resolve(root, "proc/cpuinfo");
    if (!file) {
        cpu.error = file.error();
        return cpu;
    }
    auto text = read_text(*file);
    if (!text) {
        cpu.error = text.error();
        return cpu;
    }
    // The first processor block: "key<tabs>: value" lines up to the first blank line.
    std::string_view rest = *text;
    while (!rest.empty()) {
        const auto end = rest.find('\n');
        std::string_view line = rest.substr(0, end);
        rest = end == std::string_view::npos ? std::string_view{} : rest.substr(end + 1);
        if (line.empty()) {
            if (!cpu.vendor.empty() || cpu.family) break;
            continue;
        }
        const auto colon = line.find(':');
        if (colon == std::string_view::npos) continue;
        std::string_view key = line.substr(0, colon);
        while (!key.empty() && (key.back() == ' ' || key.back() == '\t')) key.remove_suffix(1);
        std::string_view value = line.substr(colon + 1);
        while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
        if (key == "vendor_id" && cpu.vendor.empty()) {
            cpu.vendor = std::string(value);
        } else if (key == "cpu family" && !cpu.family) {
            cpu.family = decimal(value);
        } else if (key == "model" && !cpu.model) {
            cpu.model = decimal(value);
        } else if (key == "model name" && cpu.model_name.empty()) {
            cpu.model_name = std::string(value);
        }
    }
    return cpu;
}

}  // namespace rig::pci::sysfs
