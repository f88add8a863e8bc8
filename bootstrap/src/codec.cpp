// The JSON of rig's bootstrap messages (codec.hpp; the forms are listed in peer.hpp).
//
// Decoding checks every field a message needs, by name, type and range, and stops at the
// first wrong one with an Error that quotes it: a value from a peer is input. A value is
// quoted as JSON, cut to 64 characters, so a megabyte string does not become a megabyte
// message.
#include "codec.hpp"

#include <arpa/inet.h>

#include <array>
#include <charconv>
#include <limits>
#include <nlohmann/json.hpp>
#include <span>
#include <utility>

namespace rig::bootstrap::codec {
namespace {

using json = nlohmann::json;

std::string quoted(const json& value) {
    std::string text = value.dump(-1, ' ', false, json::error_handler_t::replace);
    if (text.size() > 64) text = text.substr(0, 61) + "...";
    return text;
}

// The values a named field may take; each is spelled by its to_string (messages.hpp).
template <class E>
using Names = std::span<const E>;

constexpr Role roles[] = {Role::Sender, Role::Receiver};
constexpr Path paths[] = {Path::P2p, Path::Bounce};
constexpr Choice choices[] = {Choice::Both, Choice::Auto, Choice::P2p, Choice::Bounce};
constexpr Mode modes[] = {Mode::SendRecv, Mode::Read};
constexpr bnxt::Mtu mtus[] = {bnxt::Mtu::Mtu256, bnxt::Mtu::Mtu512, bnxt::Mtu::Mtu1024, bnxt::Mtu::Mtu2048,
                              bnxt::Mtu::Mtu4096};

// "\"a\" or \"b\"", "one of \"a\", \"b\", \"c\"".
template <class E>
std::string alternatives(Names<E> names) {
    std::string out = names.size() > 2 ? "one of " : "";
    for (std::size_t i = 0; i < names.size(); ++i) {
        if (i > 0) out += names.size() > 2 ? ", " : " or ";
        out += "\"" + std::string(to_string(names[i])) + "\"";
    }
    return out;
}

// The fields of one JSON object of a message, each checked as it is taken. `prefix` names
// where the object sits in the message ("job.", "regions[1].").
class Fields {
public:
    Fields(const json& object, std::string_view message, std::string prefix = {})
        : object_(&object), message_(message), prefix_(std::move(prefix)) {}

    bool has(std::string_view name) const { return object_->contains(name); }
    Result<const json*> field(std::string_view name) const {
        const auto it = object_->find(name);
        if (it == object_->end()) return fail("the \"", message_, "\" message has no field \"", prefix_, name, "\"");
        return &*it;
    }
    Result<std::uint64_t> number(std::string_view name, std::uint64_t min = 0,
                                 std::uint64_t max = std::numeric_limits<std::uint64_t>::max()) const {
        auto v = field(name);
        if (!v) return std::unexpected(std::move(v).error());
        if (!(*v)->is_number_unsigned()) return wrong(name, **v, "not an unsigned integer");
        const auto n = (*v)->get<std::uint64_t>();
        if (n < min) return wrong(name, **v, "below " + std::to_string(min));
        if (n > max) return wrong(name, **v, "above " + std::to_string(max));
        return n;
    }
    Result<std::string> text(std::string_view name) const {
        auto v = field(name);
        if (!v) return std::unexpected(std::move(v).error());
        if (!(*v)->is_string()) return wrong(name, **v, "not a string");
        return (*v)->get<std::string>();
    }
    Result<bool> flag(std::string_view name) const {
        auto v = field(name);
        if (!v) return std::unexpected(std::move(v).error());
        if (!(*v)->is_boolean()) return wrong(name, **v, "not true or false");
        return (*v)->get<bool>();
    }
    template <class E>
    Result<E> named(std::string_view name, Names<E> names) const {
        auto v = field(name);
        if (!v) return std::unexpected(std::move(v).error());
        if ((*v)->is_string())
            for (const E value : names)
                if ((*v)->get<std::string>() == to_string(value)) return value;
        return wrong(name, **v, "not " + alternatives(names));
    }
    Result<const json*> object(std::string_view name) const {
        auto v = field(name);
        if (!v) return std::unexpected(std::move(v).error());
        if (!(*v)->is_object()) return wrong(name, **v, "not an object");
        return *v;
    }
    Result<const json*> array(std::string_view name) const {
        auto v = field(name);
        if (!v) return std::unexpected(std::move(v).error());
        if (!(*v)->is_array()) return wrong(name, **v, "not an array");
        return *v;
    }
    std::unexpected<std::string> wrong(std::string_view name, const json& value, const std::string& why) const {
        return fail("in the \"", message_, "\" message, \"", prefix_, name, "\" is ", quoted(value), ", ", why);
    }
    std::string_view message() const { return message_; }
    const std::string& prefix() const { return prefix_; }

private:
    const json* object_;
    std::string_view message_;
    std::string prefix_;
};

// Assigns the field or returns its Error from the decoder it appears in.
#define RIG_TAKE(target, expression)                                              \
    do {                                                                          \
        auto taken_ = (expression);                                               \
        if (!taken_) return std::unexpected(std::move(taken_).error());           \
        target = static_cast<std::remove_reference_t<decltype(target)>>(*taken_); \
    } while (false)

constexpr std::uint64_t bits24 = (std::uint64_t{1} << 24) - 1;
constexpr std::uint64_t bits32 = std::numeric_limits<std::uint32_t>::max();

Result<bnxt::Gid> gid_of(const Fields& f, std::string_view name) {
    auto text = f.text(name);
    if (!text) return std::unexpected(std::move(text).error());
    bnxt::Gid gid{};
    if (::inet_pton(AF_INET6, text->c_str(), gid.data()) != 1) return f.wrong(name, *text, "not an IPv6 address");
    return gid;
}

Result<bnxt::Mac> mac_of(const Fields& f, std::string_view name) {
    auto text = f.text(name);
    if (!text) return std::unexpected(std::move(text).error());
    bnxt::Mac mac{};
    const bool shaped = text->size() == 17;
    for (std::size_t i = 0; shaped && i < 6; ++i) {
        const char* at = text->data() + 3 * i;
        if (i < 5 && at[2] != ':') return f.wrong(name, *text, "not a MAC address like \"02:00:00:00:00:01\"");
        const auto [end, ec] = std::from_chars(at, at + 2, mac[i], 16);
        if (ec != std::errc{} || end != at + 2)
            return f.wrong(name, *text, "not a MAC address like \"02:00:00:00:00:01\"");
    }
    if (!shaped) return f.wrong(name, *text, "not a MAC address like \"02:00:00:00:00:01\"");
    return mac;
}

Result<bnxt::Mtu> mtu_of(const Fields& f, std::string_view name) {
    auto n = f.number(name);
    if (!n) return std::unexpected(std::move(n).error());
    for (const bnxt::Mtu mtu : mtus)
        if (*n == bnxt::bytes(mtu)) return mtu;
    return f.wrong(name, *n, "not 256, 512, 1024, 2048 or 4096");
}

Result<Message> hello(const Fields& f) {
    Hello m;
    RIG_TAKE(m.role, f.named("role", Names<Role>(roles)));
    const json* job = nullptr;
    RIG_TAKE(job, f.object("job"));
    const Fields j(*job, f.message(), "job.");
    RIG_TAKE(m.job.size, j.number("size", 1));
    RIG_TAKE(m.job.chunk, j.number("chunk", 1));
    RIG_TAKE(m.job.depth, j.number("depth", 1, bits32));
    RIG_TAKE(m.job.mode, j.named("mode", Names<Mode>(modes)));
    RIG_TAKE(m.job.choice, j.named("choice", Names<Choice>(choices)));
    if (f.has("cable_port")) {
        std::uint16_t port = 0;
        RIG_TAKE(port, f.number("cable_port", 1, 65535));
        m.cable_port = port;
    }
    return m;
}

Result<Message> queue_pair(const Fields& f) {
    QueuePair m;
    RIG_TAKE(m.endpoint.qpn, f.number("qpn", 0, bits24));
    RIG_TAKE(m.endpoint.psn, f.number("psn", 0, bits24));
    RIG_TAKE(m.endpoint.gid, gid_of(f, "gid"));
    RIG_TAKE(m.endpoint.mac, mac_of(f, "mac"));
    RIG_TAKE(m.endpoint.mtu, mtu_of(f, "mtu"));
    RIG_TAKE(m.max_qp_rd_atom, f.number("max_qp_rd_atom", 0, bits32));
    RIG_TAKE(m.max_qp_init_rd_atom, f.number("max_qp_init_rd_atom", 0, bits32));
    return m;
}

Result<Message> path_open(const Fields& f) {
    PathOpen m;
    RIG_TAKE(m.path, f.named("path", Names<Path>(paths)));
    RIG_TAKE(m.opened, f.flag("opened"));
    RIG_TAKE(m.reason, f.text("reason"));
    const json* regions = nullptr;
    RIG_TAKE(regions, f.array("regions"));
    for (std::size_t i = 0; i < regions->size(); ++i) {
        const json& r = (*regions)[i];
        const std::string at = "regions[" + std::to_string(i) + "]";
        if (!r.is_object()) return f.wrong(at, r, "not an object");
        const Fields g(r, f.message(), at + ".");
        RemoteRegion region;
        RIG_TAKE(region.remote.address, g.number("address"));
        RIG_TAKE(region.remote.rkey, g.number("rkey", 0, bits32));
        RIG_TAKE(region.bytes, g.number("bytes", 1));
        m.regions.push_back(region);
    }
    return m;
}

template <class Count>
Result<Message> count(const Fields& f) {
    Count m;
    RIG_TAKE(m.path, f.named("path", Names<Path>(paths)));
    RIG_TAKE(m.chunks, f.number("chunks"));
    return m;
}

Result<Message> ready(const Fields& f) {
    Ready m;
    RIG_TAKE(m.path, f.named("path", Names<Path>(paths)));
    return m;
}

Result<Message> outcome(const Fields& f) {
    Outcome m;
    RIG_TAKE(m.path, f.named("path", Names<Path>(paths)));
    RIG_TAKE(m.bytes, f.number("bytes"));
    RIG_TAKE(m.checksum, f.number("checksum"));
    RIG_TAKE(m.failed, f.text("failed"));
    return m;
}

Result<Message> failure(const Fields& f) {
    Failure m;
    RIG_TAKE(m.message, f.text("message"));
    return m;
}

#undef RIG_TAKE

struct Decoder {
    const char* type;
    Result<Message> (*decode)(const Fields&);
};
constexpr Decoder decoders[] = {
    {"hello", hello},          {"queue_pair", queue_pair},    {"path", path_open},  {"ready", ready},
    {"staged", count<Staged>}, {"consumed", count<Consumed>}, {"outcome", outcome}, {"error", failure},
};

json encode_json(const Hello& m) {
    json out = {{"type", "hello"},
                {"role", to_string(m.role)},
                {"job",
                 {{"size", m.job.size},
                  {"chunk", m.job.chunk},
                  {"depth", m.job.depth},
                  {"mode", to_string(m.job.mode)},
                  {"choice", to_string(m.job.choice)}}}};
    if (m.cable_port) out["cable_port"] = *m.cable_port;
    return out;
}
json encode_json(const QueuePair& m) {
    return {{"type", "queue_pair"},
            {"qpn", m.endpoint.qpn},
            {"psn", m.endpoint.psn},
            {"gid", bnxt::to_string(m.endpoint.gid)},
            {"mac", bnxt::to_string(m.endpoint.mac)},
            {"mtu", bnxt::bytes(m.endpoint.mtu)},
            {"max_qp_rd_atom", m.max_qp_rd_atom},
            {"max_qp_init_rd_atom", m.max_qp_init_rd_atom}};
}
json encode_json(const PathOpen& m) {
    json regions = json::array();
    for (const auto& r : m.regions)
        regions.push_back({{"address", r.remote.address}, {"rkey", r.remote.rkey}, {"bytes", r.bytes}});
    return {{"type", "path"},
            {"path", to_string(m.path)},
            {"opened", m.opened},
            {"reason", m.reason},
            {"regions", std::move(regions)}};
}
json encode_json(const Ready& m) { return {{"type", "ready"}, {"path", to_string(m.path)}}; }
json encode_json(const Staged& m) { return {{"type", "staged"}, {"path", to_string(m.path)}, {"chunks", m.chunks}}; }
json encode_json(const Consumed& m) {
    return {{"type", "consumed"}, {"path", to_string(m.path)}, {"chunks", m.chunks}};
}
json encode_json(const Outcome& m) {
    return {{"type", "outcome"},
            {"path", to_string(m.path)},
            {"bytes", m.bytes},
            {"checksum", m.checksum},
            {"failed", m.failed}};
}
json encode_json(const Failure& m) { return {{"type", "error"}, {"message", m.message}}; }

}  // namespace

std::string encode(const Message& message) {
    // Strings from this side (reasons, failures) may hold any bytes: replace what is not UTF-8.
    return std::visit([](const auto& m) { return encode_json(m).dump(-1, ' ', false, json::error_handler_t::replace); },
                      message);
}

Result<Message> decode(std::string_view payload, const char* expected) {
    const std::string where = expected ? std::string(", where \"") + expected + "\" was expected" : std::string();
    json value;
    try {
        value = json::parse(payload.begin(), payload.end());
    } catch (const json::parse_error& e) {
        return fail("sent something that is not JSON (parse error at byte ", std::to_string(e.byte), ")", where);
    }
    if (!value.is_object()) return fail("sent JSON that is not an object: ", quoted(value), where);
    const auto type = value.find("type");
    if (type == value.end() || !type->is_string()) return fail("sent a JSON object without a string \"type\"", where);
    const std::string name = type->get<std::string>();
    for (const Decoder& d : decoders) {
        if (name != d.type) continue;
        if (expected && name != expected && name != "error") return fail("sent \"", name, "\"", where);
        return d.decode(Fields(value, d.type));
    }
    return fail("sent a message of unknown type ", quoted(*type), where);
}

}  // namespace rig::bootstrap::codec
