"""Fills a torch tensor on machine 1's simulated GPU and sends it into machine 2's GPU memory,
NIC straight into GPU memory; prints the path and the check. README.md, "Python"."""
import torch

import rig
import rig.bnxt
import rig.gpu

BYTES = 1 << 20
machines = rig.sim.machines(topology="switch", gpu_memory=4 * BYTES)
sides = []
for m in machines:  # each machine: its GPU's memory registered with its NIC
    gpu = rig.gpu.Gpu.open(m.machine, m.gpu_bus)
    nic = rig.bnxt.Nic.open(m.machine, m.nic_bus)
    memory = gpu.alloc(BYTES)
    cq = rig.bnxt.Cq.create(nic, 16)
    qp = rig.bnxt.Qp.create(nic, cq, send_depth=4, recv_depth=4)
    sides.append((m, gpu, nic, memory, rig.bnxt.Region.device(nic, memory), cq, qp))
(m1, gpu1, nic1, src, src_region, cq1, qp1), (m2, gpu2, nic2, dst, dst_region, cq2, qp2) = sides
qp1.connect(qp2.endpoint())
qp2.connect(qp1.endpoint())

tensor = torch.from_dlpack(src)  # machine 1's GPU memory, zero-copy
tensor.copy_(torch.arange(BYTES, dtype=torch.int32).remainder(251).to(torch.uint8))
assert qp2.recv(region=dst_region, bytes=BYTES, id=2) and qp1.send(region=src_region, bytes=BYTES, id=1)
done = cq2.wait(timeout=5.0)  # the receive's completion says the bytes are in GPU memory
assert done and done[0].ok, done
print(f"path: {m1.name} GPU {m1.gpu_bus} -> NIC {m1.nic_bus} ~ NIC {m2.nic_bus} -> GPU {m2.gpu_bus} "
      f"({m1.machine.route(m1.gpu_bus, m1.nic_bus).verdict} on each, {done[0].bytes} bytes)")
same = torch.equal(torch.from_dlpack(dst), tensor) and gpu1.checksum(src) == gpu2.checksum(dst)
print("check: tensors and checksums", "match" if same else "DIFFER")
raise SystemExit(0 if same else 1)
