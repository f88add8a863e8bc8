// The test driver of harness.hpp: every offset and value below is read off the spec's
// tables (section given at each function), not taken from the hsi headers.
#include "harness.hpp"

#include <chrono>
#include <stdexcept>
#include <thread>
#include <utility>

namespace rig::bnxt::sim::test {

Msg& Msg::put(std::size_t offset, unsigned width, std::uint64_t value) {
    for (unsigned i = 0; i < width; ++i) b.at(offset + i) = static_cast<std::byte>(value >> (8 * i));
    return *this;
}

Msg& Msg::put_bytes(std::size_t offset, std::span<const std::uint8_t> bytes) {
    for (std::size_t i = 0; i < bytes.size(); ++i) b.at(offset + i) = std::byte{bytes[i]};
    return *this;
}

std::uint64_t get(std::span<const std::byte> b, std::size_t offset, unsigned width) {
    std::uint64_t v = 0;
    for (unsigned i = 0; i < width; ++i) v |= std::uint64_t{std::to_integer<std::uint8_t>(b[offset + i])} << (8 * i);
    return v;
}

Bytes pattern(std::size_t n, std::uint32_t seed) {
    Bytes out(n);
    std::uint32_t x = seed * 2654435761u + 1;
    for (auto& b : out) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        b = static_cast<std::byte>(x);
    }
    return out;
}

std::uint64_t Memory::at(std::uint64_t offset) const {
    if (level == 0) return pbl + offset;
    return pages.at(offset / 4096) + offset % 4096;
}

std::uint64_t doorbell(std::uint64_t type, std::uint32_t xid, std::uint32_t index, std::uint32_t epoch) {
    const std::uint64_t low = (index & 0xFFFFFFu) | (std::uint64_t{epoch & 1} << 24);
    const std::uint64_t high = (xid & 0xFFFFFu) | (std::uint64_t{1} << 26) | (type << 28);
    return low | (high << 32);
}

namespace {

ModelOptions with_clock(ModelOptions o, const ModelClock* clock, const Mac& mac) {
    o.clock = clock;
    o.mac = mac;
    return o;
}

}  // namespace

Node::Node(std::uint8_t mac_last, ModelOptions options, Boot boot_mode)
    : Node(Mac{0x02, 0x00, 0x00, 0x00, 0x00, mac_last}, std::move(options), boot_mode) {}

Node::Node(const Mac& m, ModelOptions options, Boot boot_mode)
    : bus(0x0000'0001'0000'0000 + (std::uint64_t{m[5]} << 36)),
      nic(with_clock(std::move(options), &clock, m)),
      faults(nic) {
    mac = m;
    gid = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 10, 0, 0, m[5]};  // ::ffff:10.0.0.n
    nic.attach(bus);
    resp = bus.alloc(4096);
    if (boot_mode == Boot::Hwrm && boot() != 0) throw std::runtime_error("BACKING_STORE_CFG refused");
}

Bytes Node::hwrm_short(Msg r) {
    const std::uint16_t s = seq++;
    r.put(2, 2, 0xFFFF).put(4, 2, s).put(6, 2, 0xFFFF).put(8, 8, resp);
    r.b.resize((r.b.size() + 7) / 8 * 8);
    bus.poke(resp, Bytes(4096));
    const std::uint64_t req = bus.alloc(r.b.size());
    bus.poke(req, r.b);
    // §3.1: req_type @0, signature 0x4321 @2, target_id 0 @4, size @6, req_addr @8.
    Msg d(16);
    d.put(0, 2, get(r.b, 0, 2)).put(2, 2, 0x4321).put(6, 2, r.b.size()).put(8, 8, req);
    for (std::size_t i = 0; i < 16; i += 4) w32(i, static_cast<std::uint32_t>(get(d.b, i, 4)));
    w32(0x100, 1);
    settle();
    const auto len = static_cast<std::size_t>(bus.get(resp + 6, 2));
    if (len == 0 || bus.get(resp + 4, 2) != s || bus.get(resp + len - 1, 1) != 1) return {};
    return bus.peek(resp, len);
}

Msg Node::backing_store_cfg(std::uint32_t qps, std::uint32_t cqs, std::uint32_t mrs) {
    // §3.11 QCAPS: qp_max_entries @8, qp_min_qp1 @12, qp_max_l2 @14, qp_entry_size @16,
    // cq_max_l2 @26, cq_entry_size @32, stat_entry_size @44, tqm_entry_size @46,
    // tqm_min_entries_per_ring @48, mrav_entry_size @60, tim_entry_size @62,
    // mrav_num_entries_units @68, tqm_fp_rings_count @78.
    const Bytes q = hwrm(Msg(16).put(0, 2, 0x0192));
    if (q.size() < 104) throw std::runtime_error("BACKING_STORE_QCAPS failed");
    unsigned fp_rings = static_cast<unsigned>(get(q, 78, 1));
    if (fp_rings == 0) {
        // QUEUE_QPORTCFG: max_configurable_queues @8.
        const Bytes p = hwrm(Msg(24).put(0, 2, 0x0030));
        if (p.size() < 32) throw std::runtime_error("QUEUE_QPORTCFG failed");
        fp_rings = static_cast<unsigned>(get(p, 8, 1));
    }
    const std::uint32_t qp1 = static_cast<std::uint32_t>(get(q, 12, 2)),
                        qp_l2 = static_cast<std::uint32_t>(get(q, 14, 2));
    const std::uint32_t cq_l2 = static_cast<std::uint32_t>(get(q, 26, 2));
    const std::uint32_t tqm = std::max<std::uint32_t>(static_cast<std::uint32_t>(get(q, 48, 4)), 1024);
    const auto units = static_cast<std::uint32_t>(get(q, 68, 2));
    Msg m(336);
    m.put(0, 2, 0x0193);
    std::uint32_t enables = 0;
    // One table: its kind's page size and level @24 + kind, page directory @40 + 8 x kind.
    auto table = [&](unsigned kind, std::uint64_t entries, std::uint64_t entry_size) {
        const std::uint64_t bytes = entries * entry_size;
        const unsigned level = bytes > 512 * 4096 ? 2 : 1;
        const Memory mem = memory(bytes, level, false);
        m.put(24 + kind, 1, level).put(40 + 8 * kind, 8, mem.pbl);
        enables |= 1u << kind;
    };
    table(0, qp_l2 + qp1 + qps, get(q, 16, 2));
    m.put(168, 4, qp_l2 + qp1 + qps).put(228, 2, qp1).put(230, 2, qp_l2).put(232, 2, get(q, 16, 2));
    table(2, cq_l2 + cqs, get(q, 32, 2));
    m.put(176, 4, cq_l2 + cqs).put(238, 2, cq_l2).put(240, 2, get(q, 32, 2));
    table(4, 16, get(q, 44, 2));
    m.put(180, 4, 16).put(248, 2, get(q, 44, 2));
    table(5, tqm, get(q, 46, 2));
    m.put(184, 4, tqm);
    for (unsigned r = 0; r < fp_rings; ++r) {
        table(6 + r, tqm, get(q, 46, 2));
        m.put(188 + 4 * r, 4, tqm);
    }
    m.put(250, 2, get(q, 46, 2));
    table(14, mrs, get(q, 60, 2));
    m.put(220, 4, units != 0 ? (mrs / units) << 16 : mrs).put(252, 2, get(q, 60, 2));
    if (units != 0) m.put(16, 4, 0x2);  // MRAV_RESERVATION_SPLIT
    table(15, qp_l2 + qp1 + qps, get(q, 62, 2));
    m.put(224, 4, qp_l2 + qp1 + qps).put(254, 2, get(q, 62, 2));
    m.put(20, 4, enables);
    return m;
}

std::uint16_t Node::boot(std::uint32_t qps, std::uint32_t cqs, std::uint32_t mrs) {
    // §3.6 VER_GET: the driver's HSI 1.10.3 @16..18.
    if (hwrm(Msg(24).put(0, 2, 0x0000).put(16, 1, 1).put(17, 1, 10).put(18, 1, 3)).empty())
        throw std::runtime_error("VER_GET unanswered");
    // §3.10 DRV_RGTR: flags 16BIT_VER_MODE @16, enables OS_TYPE | VER @20, os_type @24.
    const Bytes r = hwrm(Msg(112).put(0, 2, 0x001D).put(16, 4, 0x4).put(20, 4, 0x3).put(24, 2, 0x1));
    if (r.empty() || get(r, 0, 2) != 0) throw std::runtime_error("DRV_RGTR failed");
    const Bytes c = hwrm_short(backing_store_cfg(qps, cqs, mrs));
    if (c.empty()) throw std::runtime_error("BACKING_STORE_CFG unanswered");
    return static_cast<std::uint16_t>(get(c, 0, 2));
}

Node::~Node() {
    nic.stop();
    nic.detach();
}

Memory Node::memory(std::uint64_t bytes, unsigned level, bool ring_flags) {
    Memory m;
    m.level = level;
    m.bytes = bytes;
    if (level == 0) {
        m.pbl = bus.alloc(bytes);
        m.pages = {m.pbl};
        return m;
    }
    const std::uint64_t n = (bytes + 4095) / 4096;
    for (std::uint64_t i = 0; i < n; ++i) m.pages.push_back(bus.alloc(4096));
    // §2.1: VALID on every entry; LAST / NEXT_TO_LAST on a ring's last two pages.
    auto pte = [&](std::uint64_t i) {
        std::uint64_t v = m.pages[i] | 1;
        if (ring_flags && i + 1 == n) v |= 2;
        if (ring_flags && i + 2 == n) v |= 4;
        return v;
    };
    if (level == 1) {
        m.pbl = bus.alloc(4096);
        for (std::uint64_t i = 0; i < n; ++i) bus.put(m.pbl + 8 * i, 8, pte(i));
        return m;
    }
    const std::uint64_t tables = (n + 511) / 512;
    m.pbl = bus.alloc(8 * tables);
    for (std::uint64_t j = 0; j < tables; ++j) {
        const std::uint64_t table = bus.alloc(4096);
        bus.put(m.pbl + 8 * j, 8, table | 1);
        for (std::uint64_t k = 0; k < 512 && j * 512 + k < n; ++k) bus.put(table + 8 * k, 8, pte(j * 512 + k));
    }
    return m;
}

Bytes Node::hwrm(Msg r) {
    // §3.2 header: cmpl_ring 0xFFFF @2, seq_id @4, target_id 0xFFFF @6, resp_addr @8.
    const std::uint16_t s = seq++;
    r.put(2, 2, 0xFFFF).put(4, 2, s).put(6, 2, 0xFFFF).put(8, 8, resp);
    bus.poke(resp, Bytes(4096));
    // §3.1: 32-bit stores, zero-filled up to max_req_len (128), then the trigger.
    const std::size_t n = std::max<std::size_t>(128, (r.b.size() + 3) / 4 * 4);
    for (std::size_t i = 0; i < n; i += 4) w32(i, static_cast<std::uint32_t>(i < r.b.size() ? get(r.b, i, 4) : 0));
    w32(0x100, 1);
    settle();
    const auto len = static_cast<std::size_t>(bus.get(resp + 6, 2));
    if (len == 0 || bus.get(resp + 4, 2) != s || bus.get(resp + len - 1, 1) != 1) return {};
    return bus.peek(resp, len);
}

Ring Node::ring_alloc(std::uint32_t entries, std::uint16_t vector, std::uint8_t int_mode) {
    Ring ring;
    ring.entries = entries;
    const std::uint64_t bytes = std::uint64_t{entries} * 16;
    const unsigned level = bytes <= 4096 ? 0 : 1;
    ring.memory = memory(bytes, level, true);
    // §3.12: ring_type 5 (NQ) @20, page_tbl_addr @24, page_size @36, depth @37, length @40,
    // logical_id @44, int_mode @76.
    Msg m(96);
    m.put(0, 2, 0x0050).put(20, 1, 5).put(24, 8, ring.memory.pbl).put(36, 1, 12).put(37, 1, level);
    m.put(40, 4, entries).put(44, 2, vector).put(76, 1, int_mode);
    const Bytes out = hwrm(m);
    if (out.empty() || get(out, 0, 2) != 0) throw std::runtime_error("RING_ALLOC failed");
    ring.id = static_cast<std::uint16_t>(get(out, 8, 2));
    return ring;
}

void Node::open_channel(std::uint32_t creq_entries, std::uint32_t depth) {
    creq = ring_alloc(creq_entries, 0);
    cmdq_depth = depth;
    cmdq = bus.alloc(std::uint64_t{depth} * 16);
    // §4.2: cmdq_pbl @0, cmdq_size_cmdq_lvl @8 (depth << 2 | level 0), creq_ring_id @10, prod_idx @12.
    w32(0x600, static_cast<std::uint32_t>(cmdq));
    w32(0x604, static_cast<std::uint32_t>(cmdq >> 32));
    w32(0x608, (depth << 2) | (std::uint32_t{creq.id} << 16));
    w32(0x60C, 0);
    cmdq_prod = 0;
    cmdq_first = true;
    ring(doorbell(spec::db_nq_arm, creq.id, 0, 0));
    settle();
}

std::optional<Bytes> Node::creq_take() {
    const std::uint64_t at = creq.memory.at(std::uint64_t{creq.index} * 16);
    if ((bus.get(at + 8, 1) & 1) != 1 - creq.epoch) return std::nullopt;  // §4.5.1 consume rule
    Bytes entry = bus.peek(at, 16);
    if (++creq.index == creq.entries) {
        creq.index = 0;
        creq.epoch ^= 1;
    }
    ring(doorbell(spec::db_nq, creq.id, creq.index, creq.epoch));
    settle();
    return entry;
}

std::optional<Completion> Node::rcfw(Msg c, std::uint64_t side_buffer, std::uint8_t side_units) {
    // §4.4: cmd_size @1 in 16-byte units, cookie @4, resp_size @6, resp_addr @8.
    const std::size_t slots = (c.b.size() + 15) / 16;
    c.b.resize(slots * 16);
    const std::uint16_t ck = cookie++;
    c.put(1, 1, slots).put(4, 2, ck);
    if (side_buffer) c.put(6, 1, side_units).put(8, 8, side_buffer);
    for (std::size_t i = 0; i < slots; ++i)
        bus.poke(cmdq + ((cmdq_prod + i) % cmdq_depth) * 16, std::span(c.b).subspan(i * 16, 16));
    cmdq_prod = (cmdq_prod + static_cast<std::uint32_t>(slots)) & 0xFFFF;
    // §4.3 step 5: bit 31 on the first producer write after channel start; then the trigger.
    w32(0x60C, cmdq_prod | (cmdq_first ? 0x80000000u : 0u));
    cmdq_first = false;
    w32(0x700, 1);
    settle();
    std::optional<Bytes> e;
    for (;;) {
        e = creq_take();
        if (!e) return std::nullopt;
        const auto event = get(*e, 9, 1);
        if (event != 0xC0 && event != 0xC1) break;
        pending_events.push_back(*e);
    }
    Completion done;
    done.status = static_cast<std::uint8_t>(get(*e, 1, 1));
    done.xid = static_cast<std::uint32_t>(get(*e, 4, 4));
    done.raw = *e;
    EXPECT_EQ(get(*e, 0, 1) & 0x3F, 0x38u) << "CREQ type";
    EXPECT_EQ(get(*e, 9, 1), get(c.b, 0, 1)) << "CREQ event = opcode";
    EXPECT_EQ(get(*e, 2, 2), ck) << "CREQ cookie";
    return done;
}

std::vector<Bytes> Node::events() {
    while (auto e = creq_take()) pending_events.push_back(*e);
    return std::exchange(pending_events, {});
}

void Node::up(std::uint32_t depth) {
    open_channel(64, depth);
    // §3.13 STAT_CTX_ALLOC: stat_ctx_flags ROCE @28; response stat_ctx_id @8.
    const Bytes s = hwrm(Msg(48).put(0, 2, 0x00B0).put(24, 4, 1000).put(28, 1, 1));
    ASSERT_FALSE(s.empty());
    stat_ctx = static_cast<std::uint32_t>(get(s, 8, 4));
    // §4.6.3 INITIALIZE_FW: stat_ctx_id @108, everything else 0 on P5.
    const auto init = rcfw(Msg(112).put(0, 1, spec::op_initialize_fw).put(108, 4, stat_ctx));
    ASSERT_TRUE(init && init->status == 0);
    nq = ring_alloc(256, 1);
    // §4.6.5 ADD_GID: the GID reversed @16, the MAC pair-swapped @32.
    Msg g(48);
    g.put(0, 1, spec::op_add_gid);
    for (int i = 0; i < 16; ++i) g.put(16 + i, 1, gid[15 - i]);
    const std::uint8_t swapped[6] = {mac[1], mac[0], mac[3], mac[2], mac[5], mac[4]};
    g.put_bytes(32, swapped);
    const auto added = rcfw(g);
    ASSERT_TRUE(added && added->status == 0);
    gid_index = static_cast<std::uint16_t>(added->xid);
}

Cq Node::create_cq(std::uint32_t entries) {
    static std::uint64_t handles = 0xC0DE'0000'0000'0000;
    Cq cq;
    cq.size = entries;
    cq.handle = ++handles;
    const std::uint64_t bytes = std::uint64_t{entries} * 32;
    cq.memory = memory(bytes, bytes <= 4096 ? 0 : 1, true);
    // §4.6.6: cq_handle @16, pg_size_lvl @24, cq_fco_cnq_id @28, cq_size @36, pbl @40.
    Msg m(56);
    m.put(0, 1, spec::op_create_cq).put(16, 8, cq.handle).put(24, 4, cq.memory.level).put(28, 4, nq.id);
    m.put(36, 4, entries).put(40, 8, cq.memory.pbl);
    const auto done = rcfw(m);
    if (!done || done->status != 0) throw std::runtime_error("CREATE_CQ failed");
    cq.id = done->xid;
    ring(doorbell(spec::db_cq_armena, cq.id, 0, 0));
    settle();
    return cq;
}

Qp Node::create_qp(Cq& scq, Cq& rcq, std::uint32_t sq_size, std::uint32_t rq_size, std::uint8_t sq_sge,
                   std::uint8_t rq_sge, std::uint32_t pd) {
    static std::uint64_t handles = 0xA000'0000'0000'0000;
    Qp qp;
    qp.handle = ++handles;
    qp.sq_size = sq_size;
    qp.rq_size = rq_size;
    qp.scq = &scq;
    qp.rcq = &rcq;
    qp.pd = pd;
    // §5.4: the WQE ring, then a 16-byte PSN search entry per WQE, in one page list.
    qp.sq = memory(std::uint64_t{sq_size} * 128 + std::uint64_t{sq_size} * 16, 1, true);
    qp.rq = memory(std::max<std::uint64_t>(1, rq_size) * 128, 1, true);
    const std::uint64_t irrq = bus.alloc(4096), orrq = bus.alloc(4096);
    // §4.6.8: qp_handle @16, qp_flags @24, type @28, sq/rq pg_size_lvl @29/@30, sq_size @36,
    // rq_size @40, sq_sge @44, rq_sge @46, scq @48, rcq @52, pd @60, sq_pbl @64, rq_pbl @72,
    // irrq @80, orrq @88.
    Msg m(104);
    m.put(0, 1, spec::op_create_qp).put(16, 8, qp.handle).put(24, 4, 0x0C).put(28, 1, 2).put(29, 1, 1).put(30, 1, 1);
    m.put(36, 4, sq_size).put(40, 4, rq_size).put(44, 2, sq_sge).put(46, 2, rq_sge).put(48, 4, scq.id);
    m.put(52, 4, rcq.id).put(60, 4, pd).put(64, 8, qp.sq.pbl).put(72, 8, qp.rq.pbl).put(80, 8, irrq).put(88, 8, orrq);
    const auto done = rcfw(m);
    if (!done || done->status != 0) throw std::runtime_error("CREATE_QP failed");
    qp.qpn = done->xid;
    qp.psn = (0x10000 + qp.qpn * 0x1111) & 0xFFFFFF;
    return qp;
}

std::uint32_t Node::register_mr(std::uint8_t type, std::uint8_t access, unsigned level, unsigned log2_page,
                                std::uint64_t pbl, std::uint64_t va, std::uint64_t size, std::uint32_t pd,
                                std::uint16_t flags, std::uint8_t* status) {
    // §4.6.12 ALLOCATE_MRW: mrw_handle @16, mrw_flags @24, pd_id @28; xid = key.
    const auto a = rcfw(Msg(32).put(0, 1, spec::op_allocate_mrw).put(16, 8, 0x4D52).put(24, 1, type).put(28, 4, pd));
    if (!a || a->status != 0) throw std::runtime_error("ALLOCATE_MRW failed");
    // REGISTER_MR: flags @2, log2_pg_size_lvl @16, access @17, log2_pbl_pg_size @18, key @20,
    // pbl @24, va @32, mr_size @40.
    Msg m(56);
    m.put(0, 1, spec::op_register_mr).put(2, 2, flags).put(16, 1, level | (log2_page << 2)).put(17, 1, access);
    m.put(18, 2, 12).put(20, 4, a->xid).put(24, 8, pbl).put(32, 8, va).put(40, 8, size);
    const auto r = rcfw(m);
    if (!r) throw std::runtime_error("REGISTER_MR unanswered");
    if (status) *status = r->status;
    else if (r->status != 0) throw std::runtime_error("REGISTER_MR failed");
    return a->xid;
}

std::uint32_t Node::dma_mr(std::uint8_t access, std::uint32_t pd) {
    // §6.5: PMR, level 0, 4 KiB, pbl 0, va 0, size all-ones.
    return register_mr(1, access, 0, 12, 0, 0, ~std::uint64_t{0}, pd);
}

std::uint8_t Node::modify(Qp& qp, std::uint32_t mask, std::uint8_t state, const std::function<void(Msg&)>& fill) {
    // §4.6.9: modify_mask @16, qp_cid @20, new_state bits 3:0 and the network type (2:
    // RoCEv2/IPv4 unless a test says otherwise) in bits 7:6 of byte 24.
    Msg m(144);
    m.put(0, 1, spec::op_modify_qp).put(16, 4, mask).put(20, 4, qp.qpn).put(24, 1, state | (unsigned{network} << 6));
    if (fill) fill(m);
    const auto done = rcfw(m);
    return done ? done->status : 0xFF;
}

std::uint8_t Node::to_init(Qp& qp, std::uint8_t access) {
    // RESET -> INIT: STATE | ACCESS | PKEY; access @25 (QP encoding), pkey @26.
    return modify(qp, 0x0000000D, 1, [&](Msg& m) { m.put(25, 1, access).put(26, 2, 0xFFFF); });
}

std::uint8_t Node::to_rtr(Qp& qp, const Node& peer, const Qp& peer_qp, std::uint8_t mtu_code, std::uint8_t irrq_slots) {
    return to_rtr(qp, peer.gid, peer.mac, peer_qp.qpn, peer_qp.psn, mtu_code, irrq_slots);
}

std::uint8_t Node::to_rtr(Qp& qp, const Gid& dgid, const Mac& dmac, std::uint32_t dest_qpn, std::uint32_t rq_psn,
                          std::uint8_t mtu_code, std::uint8_t irrq_slots) {
    // INIT -> RTR, mask 0x141517E1 ([CORRECTED]): dgid @32, sgid_index @52, hop_limit @54,
    // dest_mac @56, path MTU @63 bits 7:4, min_rnr_timer @67 (1: 0.01 ms), rq_psn @68,
    // max_dest_rd_atomic @77 (4: depth 1; 6: depth 2), dest_qp_id @96, VLAN 0xFFF @110.
    qp.mtu = 256u << mtu_code;
    return modify(qp, 0x141517E1, 2, [&](Msg& m) {
        m.put_bytes(32, dgid).put(52, 2, gid_index).put(54, 1, 64).put_bytes(56, dmac);
        m.put(63, 1, mtu_code << 4).put(67, 1, 1).put(68, 4, rq_psn).put(77, 1, irrq_slots).put(96, 4, dest_qpn);
        m.put(110, 2, 0xFFF);
    });
}

std::uint8_t Node::to_rts(Qp& qp, std::uint8_t rnr_retry, std::uint8_t timeout, std::uint8_t retry_cnt) {
    // RTR -> RTS, mask 0x000AE001: timeout @64, retry_cnt @65, rnr_retry @66, sq_psn @72,
    // max_rd_atomic @76 (2: depth 1).
    return modify(qp, 0x000AE001, 3, [&](Msg& m) {
        m.put(64, 1, timeout).put(65, 1, retry_cnt).put(66, 1, rnr_retry).put(72, 4, qp.psn).put(76, 1, 2);
    });
}

void Node::connect(Node& a, Qp& qa, Node& b, Qp& qb, std::uint8_t mtu_code, std::uint8_t access, std::uint8_t rnr_retry,
                   std::uint8_t timeout, std::uint8_t retry_cnt) {
    ASSERT_EQ(a.to_init(qa, access), 0);
    ASSERT_EQ(a.to_rtr(qa, b, qb, mtu_code), 0);
    ASSERT_EQ(b.to_init(qb, access), 0);
    ASSERT_EQ(b.to_rtr(qb, a, qa, mtu_code), 0);
    ASSERT_EQ(a.to_rts(qa, rnr_retry, timeout, retry_cnt), 0);
    ASSERT_EQ(b.to_rts(qb, rnr_retry, timeout, retry_cnt), 0);
}

void Node::post_send(Qp& qp, std::uint8_t type, std::uint8_t flags, const std::vector<Sge>& sges, std::uint32_t imm,
                     std::uint64_t remote_va, std::uint32_t rkey, bool do_ring) {
    std::uint64_t length = 0;
    for (const auto& s : sges) length += s.size;
    // §5.2: wqe_type @0, flags @1, wqe_size @2, imm @4, length @8; RDMA: remote_va @16,
    // remote_key @24; SGEs from @32 (va @0, l_key @8, size @12).
    Msg w(128);
    w.put(0, 1, type).put(1, 1, flags).put(2, 1, 2 + sges.size()).put(4, 4, imm).put(8, 4, length);
    if (type == spec::wqe_write || type == spec::wqe_write_imm || type == spec::wqe_read)
        w.put(16, 8, remote_va).put(24, 4, rkey);
    for (std::size_t i = 0; i < sges.size(); ++i)
        w.put(32 + 16 * i, 8, sges[i].va).put(40 + 16 * i, 4, sges[i].lkey).put(44 + 16 * i, 4, sges[i].size);
    bus.poke(qp.sq.at(std::uint64_t{qp.sq_index} * 128), w.b);
    // §5.4: entry k at sq_size x 128 + 16k: start PSN | type << 24, next PSN, start slot 8k.
    const std::uint32_t npkts = length == 0 ? 1 : static_cast<std::uint32_t>((length + qp.mtu - 1) / qp.mtu);
    const std::uint32_t next = (qp.psn + npkts) & 0xFFFFFF;
    Msg e(16);
    e.put(0, 4, qp.psn | (std::uint32_t{type} << 24)).put(4, 4, next).put(8, 2, 8 * qp.sq_index);
    bus.poke(qp.sq.at(std::uint64_t{qp.sq_size} * 128 + std::uint64_t{qp.sq_index} * 16), e.b);
    qp.psn = next;
    // §5.2.5: advance, flipping the producer epoch on wrap.
    if (++qp.sq_index == qp.sq_size) {
        qp.sq_index = 0;
        qp.sq_epoch ^= 1;
    }
    if (do_ring) ring_sq(qp);
}

void Node::post_inline(Qp& qp, std::span<const std::byte> data, std::uint8_t flags) {
    Msg w(128);
    // §5.2.4: INLINE flag, payload from byte 32, wqe_size = 2 + ceil(length / 16).
    w.put(0, 1, spec::wqe_send).put(1, 1, flags | spec::inline_data).put(2, 1, 2 + (data.size() + 15) / 16);
    w.put(8, 4, data.size());
    std::copy(data.begin(), data.end(), w.b.begin() + 32);
    bus.poke(qp.sq.at(std::uint64_t{qp.sq_index} * 128), w.b);
    Msg e(16);
    e.put(0, 4, qp.psn).put(4, 4, (qp.psn + 1) & 0xFFFFFF).put(8, 2, 8 * qp.sq_index);
    bus.poke(qp.sq.at(std::uint64_t{qp.sq_size} * 128 + std::uint64_t{qp.sq_index} * 16), e.b);
    qp.psn = (qp.psn + 1) & 0xFFFFFF;
    if (++qp.sq_index == qp.sq_size) {
        qp.sq_index = 0;
        qp.sq_epoch ^= 1;
    }
    ring_sq(qp);
}

void Node::post_recv(Qp& qp, std::uint32_t wr_id, const std::vector<Sge>& sges, bool do_ring) {
    // §5.3: wqe_type 0x80 @0, wqe_size @2 (a zero-length SGE when there is none), wr_id @8.
    std::vector<Sge> list = sges.empty() ? std::vector<Sge>{{0, 0, 0}} : sges;
    Msg w(128);
    w.put(0, 1, spec::wqe_recv).put(2, 1, 2 + list.size()).put(8, 4, wr_id);
    for (std::size_t i = 0; i < list.size(); ++i)
        w.put(32 + 16 * i, 8, list[i].va).put(40 + 16 * i, 4, list[i].lkey).put(44 + 16 * i, 4, list[i].size);
    bus.poke(qp.rq.at(std::uint64_t{qp.rq_index} * 128), w.b);
    if (++qp.rq_index == qp.rq_size) {
        qp.rq_index = 0;
        qp.rq_epoch ^= 1;
    }
    if (do_ring) ring(doorbell(spec::db_rq, qp.qpn, qp.rq_index, qp.rq_epoch));
}

std::optional<Cqe> Node::poll(Cq& cq, bool do_ring) {
    const std::uint64_t at = cq.memory.at(std::uint64_t{cq.index} * 32);
    // §5.5.4: new iff toggle (byte 24 bit 0) == expected phase = 1 - epoch.
    if ((bus.get(at + 24, 1) & 1) != 1 - cq.epoch) return std::nullopt;
    Cqe c{bus.peek(at, 32)};
    if (++cq.index == cq.size) {
        cq.index = 0;
        cq.epoch ^= 1;
    }
    if (do_ring) ring(doorbell(spec::db_cq, cq.id, cq.index, cq.epoch));
    return c;
}

std::vector<Cqe> Node::drain(Cq& cq) {
    std::vector<Cqe> out;
    while (auto c = poll(cq)) out.push_back(*c);
    settle();
    return out;
}

std::optional<Bytes> Node::nq_take(Ring& r, bool arm) {
    const std::uint64_t at = r.memory.at(std::uint64_t{r.index} * 16);
    if ((bus.get(at + 8, 1) & 1) != 1 - r.epoch) return std::nullopt;
    Bytes e = bus.peek(at, 16);
    if (++r.index == r.entries) {
        r.index = 0;
        r.epoch ^= 1;
    }
    ring(doorbell(arm ? spec::db_nq_arm : spec::db_nq, r.id, r.index, r.epoch));
    return e;
}

void settle(Node& a, Node& b) {
    for (int i = 0; i < 1'000'000; ++i)
        if (a.nic.settle() + b.nic.settle() == 0) return;
    ADD_FAILURE() << "models never settled";
}

std::vector<Cqe> wait_for(Node& node, Cq& cq, std::size_t n) {
    std::vector<Cqe> out;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (out.size() < n && std::chrono::steady_clock::now() < deadline) {
        if (auto c = node.poll(cq)) out.push_back(*c);
        else std::this_thread::yield();
    }
    return out;
}

}  // namespace rig::bnxt::sim::test

#include "pair.hpp"

namespace rig::bnxt::sim::test {

void Pair::open(PairConfig c) {
    a.up();
    b.up();
    if (c.nq_int_mode != 2) {
        a.nq = a.ring_alloc(64, 2, c.nq_int_mode);
        b.nq = b.ring_alloc(64, 2, c.nq_int_mode);
    }
    acq = a.create_cq(c.cq_size);
    bcq = b.create_cq(c.cq_size);
    aqp = a.create_qp(acq, acq, c.sq_size, c.rq_size);
    bqp = b.create_qp(bcq, bcq, c.sq_size, c.rq_size);
    akey = a.dma_mr(spec::mr_local_write | spec::mr_remote_read);
    bkey = b.dma_mr(spec::mr_local_write | spec::mr_remote_read);
    abuf = a.bus.alloc(c.buffer_bytes);
    bbuf = b.bus.alloc(c.buffer_bytes);
    if (c.connect) Node::connect(a, aqp, b, bqp, c.mtu_code, c.access, c.rnr_retry, c.timeout, c.retry_cnt);
}

void Pair::send_and_read_back(std::uint64_t n) {
    const Bytes data = pattern(n, static_cast<std::uint32_t>(n));
    a.bus.poke(abuf, data);
    b.post_recv(bqp, 1, {{bbuf, bkey, static_cast<std::uint32_t>(n)}});
    a.post_send(aqp, spec::wqe_send, spec::signal_comp, {{abuf, akey, static_cast<std::uint32_t>(n)}});
    settle(a, b);
    const auto rc = b.poll(bcq);
    ASSERT_TRUE(rc);
    ASSERT_EQ(rc->status(), 0);
    ASSERT_EQ(rc->length(), n);
    ASSERT_EQ(a.poll(acq)->status(), 0);
    ASSERT_TRUE(b.bus.peek(bbuf, n) == data);
    // And back by RDMA READ into A's zeroed buffer.
    a.bus.poke(abuf, Bytes(n));
    a.post_send(aqp, spec::wqe_read, spec::signal_comp, {{abuf, akey, static_cast<std::uint32_t>(n)}}, 0, bbuf, bkey);
    settle(a, b);
    ASSERT_EQ(a.poll(acq)->status(), 0);
    EXPECT_TRUE(a.bus.peek(abuf, n) == data);
}

std::uint8_t qp_state(Node& n, const Qp& qp) {
    const std::uint64_t sb = n.bus.alloc(4096);
    const auto c = n.rcfw(Msg(24).put(0, 1, spec::op_query_qp).put(16, 4, qp.qpn), sb, 7);
    if (!c || c->status != 0) return 0xFF;
    return static_cast<std::uint8_t>(n.bus.get(sb + 12, 1) & 0xF);
}

}  // namespace rig::bnxt::sim::test
