"""rig: moves data between GPUs and RDMA NICs directly over PCI Express.

rig.Machine reads a machine's PCI topology (functions, routes, `rig topo`); rig.sim builds
the two simulated machines p2p_copy runs on; rig.gpu opens a GPU and exports its memory as
a DLPack tensor (zero-copy); rig.bnxt drives the bnxt RoCE NIC: regions, completion
queues, queue pairs. rig.Error carries the library's message for every runtime failure;
misuse raises ValueError. Built for the interpreter named in README.md ("Python").
"""
import sys as _sys

from ._rig import (Error, Function, LinkState, Machine, Pairing, RankedNic, Redirect, Route,
                   RouteLink, bnxt, gpu, sim)

# `import rig.bnxt` and `from rig.gpu import Gpu` find the extension's submodules.
_sys.modules[__name__ + ".sim"] = sim
_sys.modules[__name__ + ".gpu"] = gpu
_sys.modules[__name__ + ".bnxt"] = bnxt

__all__ = ["Error", "Function", "LinkState", "Machine", "Pairing", "RankedNic", "Redirect", "Route", "RouteLink",
           "bnxt", "gpu", "sim"]
