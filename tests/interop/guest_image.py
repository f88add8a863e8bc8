#!/usr/bin/env python3
"""Builds the kernel and initramfs of a QEMU guest that runs Linux's Soft-RoCE (rdma_rxe).

Everything comes from Debian 12 packages fetched with `apt-get download` (so from the host's
configured Debian mirror and nowhere else): the kernel of linux-image-amd64 (which ships
rdma_rxe.ko), busybox-static, iproute2 (`ip`, `rdma`), ibverbs-utils, libibverbs1, the rxe
provider of ibverbs-providers, perftest, and the shared libraries these programs need,
found by following each ELF file's DT_NEEDED entries through the packages of their Depends
closure (as apt would install it on an empty system). The kernel modules are those of
MODULES with the modules their `.modinfo` `depends=` names (what depmod writes into
modules.dep), loaded by init.sh in dependency order. The kernel is kept as its uncompressed
ELF image (vmlinux_of).

The result is cached outside the source tree, in ${XDG_CACHE_HOME:-~/.cache}/rig-interop/,
in a directory named for the package versions and this builder's own files: a new Debian
point release or an edit here builds a new image; anything else reuses it. Downloaded .deb
files are kept in the cache's debs/ (their names carry their versions); images unused for
three days and the .deb files of no image left are removed.

As a program: prints the image directory (vmlinux, initramfs.cpio.gz, manifest.txt), or
exits 77 saying why where apt-get or the Debian mirror cannot be used.
"""

from __future__ import annotations

import fcntl
import gzip
import hashlib
import lzma
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent

# The programs the guest runs, and the packages they come from.
ROOTS = ["linux-image-amd64", "busybox-static", "iproute2", "ibverbs-utils",
         "ibverbs-providers", "libibverbs1", "perftest"]

# Files taken from the program packages (shell globs, paths inside the package). Libraries
# are not listed: they follow from DT_NEEDED. Of ibverbs-providers only the rxe provider:
# libibverbs loads every provider its /etc/libibverbs.d names.
FILES = {
    "busybox-static": ["bin/busybox"],
    "iproute2": ["bin/ip", "usr/bin/rdma"],
    "ibverbs-utils": ["usr/bin/ibv_*"],
    "ibverbs-providers": ["etc/libibverbs.d/rxe.driver",
                          "usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav*.so"],
    "perftest": ["usr/bin/ib_*"],
}

# Modules the guest loads; their dependencies are added. virtio_pci is the bus virtio_net's
# devices sit on, qemu_fw_cfg shows the test's command under /sys/firmware/qemu_fw_cfg.
# rdma_rxe computes its ICRC with the crypto API's "crc32" (crypto_alloc_shash in
# rxe_icrc_init), which it finds only once crc32_generic is loaded (no modprobe here to load
# it on demand; crc32-pclmul would need PCLMULQDQ, which QEMU's default CPU lacks).
MODULES = ["virtio_pci", "virtio_net", "qemu_fw_cfg", "crc32_generic", "rdma_rxe", "ib_uverbs"]

LIBRARY_DIRS = ["lib/x86_64-linux-gnu", "usr/lib/x86_64-linux-gnu", "lib64",
                "usr/lib/x86_64-linux-gnu/libibverbs"]


class Unavailable(Exception):
    """apt-get, its package lists or the Debian mirror cannot be used: the tests skip."""


@dataclass(frozen=True)
class Image:
    directory: Path
    kernel: Path
    initramfs: Path
    manifest: str  # "package version" lines, one per package the image was built from


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "rig-interop"


def _run(args: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run(args, check=False, capture_output=True, text=True, **kw)


def package_lists_state() -> str:
    """A digest of the host's apt package lists (names, sizes, times): what resolve_packages'
    answer depends on besides ROOTS."""
    h = hashlib.sha256(" ".join(ROOTS).encode())
    lists = Path("/var/lib/apt/lists")
    for p in sorted(lists.glob("*_Packages*")) if lists.is_dir() else []:
        st = p.stat()
        h.update(f"{p.name} {st.st_size} {st.st_mtime_ns}\n".encode())
    return h.hexdigest()[:16]


def resolve_packages(cache: Path | None = None) -> dict[str, str]:
    """Name -> version of every package the roots need, as apt would install them on an empty
    system (`-o Dir::State::status=/dev/null`), from the host's package lists. apt-get takes
    several seconds for it, so the answer is kept in the cache until the lists change."""
    if shutil.which("apt-get") is None or shutil.which("dpkg-deb") is None:
        raise Unavailable("apt-get or dpkg-deb not found: the guest is built from Debian packages")
    remembered = (cache or cache_root()) / f"resolved-{package_lists_state()}.txt"
    if remembered.exists():
        return dict(line.split(" ", 1) for line in remembered.read_text().splitlines())
    r = _run(["apt-get", "-o", "Dir::State::status=/dev/null", "-s", "install",
              "--no-install-recommends", *ROOTS], env={**os.environ, "LC_ALL": "C"})
    if r.returncode != 0:
        raise Unavailable("apt-get cannot resolve " + " ".join(ROOTS) +
                          " (are Debian 12's package lists there? apt-get update):\n" + r.stderr.strip())
    versions = dict(re.findall(r"^Inst (\S+) \((\S+) ", r.stdout, re.M))
    missing = [p for p in ROOTS if p not in versions]
    if missing:
        raise Unavailable("apt-get resolves no " + ", ".join(missing))
    remembered.parent.mkdir(parents=True, exist_ok=True)
    for old in remembered.parent.glob("resolved-*.txt"):
        old.unlink()
    with tempfile.NamedTemporaryFile("w", dir=remembered.parent, delete=False) as partial:
        partial.write("".join(f"{n} {v}\n" for n, v in sorted(versions.items())))
    os.replace(partial.name, remembered)
    return versions


def kernel_package(chosen: dict[str, str]) -> str:
    """The kernel image package linux-image-amd64 depends on (linux-image-6.1.0-N-amd64)."""
    kernels = [n for n in chosen if re.fullmatch(r"linux-image-\d.*-amd64", n)]
    if len(kernels) != 1:
        raise RuntimeError(f"linux-image-amd64 should depend on one kernel image, apt-get gives {kernels}")
    return kernels[0]


def builder_digest() -> str:
    h = hashlib.sha256()
    for name in ("guest_image.py", "init.sh"):
        h.update((HERE / name).read_bytes())
    return h.hexdigest()


def image_key(chosen: dict[str, str]) -> str:
    h = hashlib.sha256(builder_digest().encode())
    for name in sorted(chosen):
        h.update(f"{name}={chosen[name]}\n".encode())
    return f"{chosen[kernel_package(chosen)]}-{h.hexdigest()[:12]}"


def deb_stem(name: str, version: str) -> str:
    # apt-get download's file name but the architecture (amd64 or all): the epoch's ':' is %3a.
    return f"{name}_{version.replace(':', '%3a')}_"


def download(chosen: dict[str, str], debs: Path) -> dict[str, Path]:
    debs.mkdir(parents=True, exist_ok=True)

    def cached(directory: Path, name: str) -> Path | None:
        found = sorted(directory.glob(deb_stem(name, chosen[name]) + "*.deb"))
        return found[0] if found else None

    want = {n: cached(debs, n) for n in chosen}
    missing = [n for n, p in want.items() if p is None]
    if missing:
        with tempfile.TemporaryDirectory(dir=debs) as partial:
            os.chmod(partial, 0o777)  # apt's _apt user writes there when run as root
            r = _run(["apt-get", "download", *[f"{n}={chosen[n]}" for n in missing]], cwd=partial)
            if r.returncode != 0:
                errors = [line for line in r.stderr.splitlines() if line.startswith("E:")]
                raise Unavailable("apt-get download failed (is the Debian mirror reachable?):\n" +
                                  "\n".join(errors[:3]) + (f"\n... and {len(errors) - 3} more" if len(errors) > 3 else ""))
            for n in missing:
                got = cached(Path(partial), n)
                if got is None:
                    raise RuntimeError(f"apt-get download left no {deb_stem(n, chosen[n])}*.deb")
                want[n] = debs / got.name
                os.replace(got, want[n])
    return want


def extract(debs: dict[str, Path], into: Path) -> None:
    for name, deb in debs.items():
        (into / name).mkdir(parents=True)
        r = _run(["dpkg-deb", "-x", str(deb), str(into / name)])
        if r.returncode != 0:
            raise RuntimeError(f"dpkg-deb -x {deb}: {r.stderr.strip()}")


def elf_needed(path: Path) -> list[str] | None:
    """DT_NEEDED of an ELF file, None where it is no dynamic ELF."""
    with open(path, "rb") as f:
        if f.read(4) != b"\x7fELF":
            return None
    r = _run(["readelf", "-d", "-W", str(path)], env={**os.environ, "LC_ALL": "C"})
    if r.returncode != 0:
        raise RuntimeError(f"readelf -d {path}: {r.stderr.strip()}")
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", r.stdout)


class Root:
    """The initramfs's tree being assembled in a directory."""

    def __init__(self, path: Path):
        self.path = path

    def add(self, source: Path, inside: str, mode: int | None = None) -> Path:
        target = self.path / inside.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)  # follows symbolic links: the file under its own name
        os.chmod(target, mode if mode is not None else (source.stat().st_mode & 0o777))
        return target

    def link(self, inside: str, to: str) -> None:
        target = self.path / inside.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.symlink_to(to)


def add_programs(root: Root, extracted: Path) -> list[Path]:
    added = []
    for package, patterns in FILES.items():
        base = extracted / package
        for pattern in patterns:
            found = sorted(p for p in base.glob(pattern) if p.is_file())
            if not found:
                raise RuntimeError(f"package {package} holds no {pattern}")
            for p in found:
                added.append(root.add(p, str(p.relative_to(base))))
    return added


def resolve(path: Path, package_root: Path) -> Path:
    """Follows symbolic links inside an extracted package (absolute ones point into it)."""
    for _ in range(16):
        if not path.is_symlink():
            return path
        target = os.readlink(path)
        path = package_root / target.lstrip("/") if target.startswith("/") else path.parent / target
    raise RuntimeError(f"symbolic links loop at {path}")


def add_libraries(root: Root, extracted: Path, elves: list[Path]) -> None:
    """Copies the closure of DT_NEEDED of the given files, each library under its SONAME in the
    directory its package puts it in, plus the dynamic loader at /lib64."""
    index: dict[str, Path] = {}
    for package in sorted(extracted.iterdir()):
        for d in LIBRARY_DIRS:
            for p in sorted((package / d).glob("*.so*")) if (package / d).is_dir() else []:
                index.setdefault(p.name, p)
    loader = "ld-linux-x86-64.so.2"
    todo = [loader]
    for e in elves:
        todo += elf_needed(e) or []
    done: set[str] = set()
    while todo:
        name = todo.pop()
        if name in done:
            continue
        done.add(name)
        source = index.get(name)
        if source is None:
            raise RuntimeError(f"no package of the closure holds the library {name}")
        package, *inside = source.relative_to(extracted).parts
        added = root.add(resolve(source, extracted / package), "/".join(inside))
        todo += elf_needed(added) or []
    if not (root.path / "lib64" / loader).exists():
        root.link(f"lib64/{loader}", f"/lib/x86_64-linux-gnu/{loader}")


def read_modinfo(ko: bytes) -> dict[str, str]:
    # The .modinfo section is NUL-separated key=value strings; depends= lists module names.
    info = {}
    for m in re.finditer(rb"(?<=\0)(depends|name|vermagic)=([^\0]*)", ko):
        info.setdefault(m.group(1).decode(), m.group(2).decode())
    return info


def add_modules(root: Root, kernel_tree: Path) -> tuple[str, list[str]]:
    """Copies MODULES and their dependencies (decompressed where the package compresses them)
    and writes etc/rig/modules: one path a line, each after the modules it depends on."""
    (release,) = [p.name for p in (kernel_tree / "lib/modules").iterdir()]
    modules_dir = kernel_tree / "lib/modules" / release
    by_name = {}
    for p in modules_dir.rglob("*.ko*"):
        by_name[re.sub(r"\.ko(\.xz|\.zst|\.gz)?$", "", p.name).replace("-", "_")] = p
    builtin = {Path(line).name.removesuffix(".ko").replace("-", "_")
               for line in (modules_dir / "modules.builtin").read_text().split()}
    order: list[str] = []
    paths: list[str] = []
    visiting: set[str] = set()

    def visit(name: str) -> None:
        name = name.replace("-", "_")
        if name in order or name in builtin:
            return
        if name in visiting:
            raise RuntimeError(f"modules depend on each other in a cycle through {name}")
        if name not in by_name:
            raise RuntimeError(f"kernel {release} has no module {name}")
        visiting.add(name)
        source = by_name[name]
        data = source.read_bytes()
        if source.suffix == ".xz":
            data = lzma.decompress(data)
        elif source.suffix == ".gz":
            data = gzip.decompress(data)
        elif source.suffix == ".zst":
            data = subprocess.run(["zstd", "-dc", str(source)], check=True, capture_output=True).stdout
        for dep in filter(None, read_modinfo(data).get("depends", "").split(",")):
            visit(dep)
        visiting.discard(name)
        inside = "lib/modules/" + release + "/" + re.sub(r"\.(xz|zst|gz)$", "", str(source.relative_to(modules_dir)))
        target = root.path / inside
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        order.append(name)
        paths.append("/" + inside)

    for m in MODULES:
        visit(m)
    (root.path / "etc/rig").mkdir(parents=True, exist_ok=True)
    (root.path / "etc/rig/modules").write_text("".join(p + "\n" for p in paths))
    return release, order


def write_cpio(tree: Path, out) -> None:
    """A newc cpio archive of the tree (what the kernel unpacks as initramfs), owned by root."""
    ino = 1

    def entry(name: str, mode: int, data: bytes) -> None:
        nonlocal ino
        fields = [ino, mode, 0, 0, 1, 0, len(data), 0, 0, 0, 0, len(name) + 1, 0]
        header = b"070701" + b"".join(b"%08X" % f for f in fields)
        out.write(header + name.encode() + b"\0")
        out.write(b"\0" * ((4 - (len(header) + len(name) + 1) % 4) % 4))
        out.write(data)
        out.write(b"\0" * ((4 - len(data) % 4) % 4))
        ino += 1

    for dirpath, dirnames, filenames in os.walk(tree):
        dirnames.sort()
        rel = os.path.relpath(dirpath, tree)
        if rel != ".":
            entry(rel, stat.S_IFDIR | 0o755, b"")
        for f in sorted(filenames):
            p = Path(dirpath) / f
            name = os.path.normpath(os.path.join(rel, f))
            st = p.lstat()
            if stat.S_ISLNK(st.st_mode):
                entry(name, stat.S_IFLNK | 0o777, os.readlink(p).encode())
            else:
                entry(name, stat.S_IFREG | (st.st_mode & 0o777), p.read_bytes())
        for d in dirnames:  # os.walk lists symbolic links to directories as directories
            p = Path(dirpath) / d
            if p.is_symlink():
                entry(os.path.normpath(os.path.join(rel, d)), stat.S_IFLNK | 0o777, os.readlink(p).encode())
                dirnames.remove(d)
    entry("TRAILER!!!", 0, b"")


def vmlinux_of(bzimage: bytes) -> bytes:
    """The kernel's ELF image inside a bzImage (what scripts/extract-vmlinux does). QEMU boots it
    through its PVH entry note (Debian's kernel has CONFIG_PVH=y), so the guest does not spend
    5-7 s of TCG time decompressing itself (Debian compresses it with xz: CONFIG_KERNEL_XZ)."""
    start = bzimage.find(b"\xfd7zXZ\x00")
    if start < 0:
        raise RuntimeError("the kernel image holds no xz stream")
    elf = lzma.LZMADecompressor(format=lzma.FORMAT_XZ).decompress(bzimage[start:])
    if elf[:4] != b"\x7fELF":
        raise RuntimeError("the kernel image's xz stream is no ELF file")
    return elf


def build_into(chosen: dict[str, str], debs: dict[str, Path], out: Path, work: Path) -> None:
    extracted = work / "extracted"
    extract(debs, extracted)
    root = Root(work / "root")
    for d in ("bin", "sbin", "usr/bin", "usr/sbin", "proc", "sys", "dev", "tmp", "run", "etc"):
        (root.path / d).mkdir(parents=True, exist_ok=True)
    programs = add_programs(root, extracted)
    add_libraries(root, extracted, programs)
    kernel_tree = extracted / kernel_package(chosen)
    release, modules = add_modules(root, kernel_tree)
    root.add(HERE / "init.sh", "init", 0o755)
    (root.path / "etc/passwd").write_text("root:x:0:0:root:/:/bin/sh\n")
    (root.path / "etc/group").write_text("root:x:0:\n")
    with gzip.open(out / "initramfs.cpio.gz", "wb", compresslevel=6) as f:
        write_cpio(root.path, f)
    (kernel,) = (kernel_tree / "boot").glob("vmlinuz-*")
    (out / "vmlinux").write_bytes(vmlinux_of(kernel.read_bytes()))
    (out / "manifest.txt").write_text(
        f"kernel {release}\nmodules {' '.join(modules)}\n" +
        "".join(f"package {n} {chosen[n]}\n" for n in sorted(chosen)))


UNUSED_DAYS = 3


def prune(cache: Path) -> None:
    """Removes images not used for UNUSED_DAYS (another branch's builder or older packages may
    still want a recent one) and the .deb files no remaining image was built from."""
    now = time.time()
    kept: set[str] = set()
    for manifest in cache.glob("*/manifest.txt"):
        if now - manifest.stat().st_mtime > UNUSED_DAYS * 86400:
            shutil.rmtree(manifest.parent)
            continue
        for line in manifest.read_text().splitlines():
            if line.startswith("package "):
                _, name, version = line.split(" ")
                kept.add(deb_stem(name, version))
    for deb in (cache / "debs").glob("*.deb"):
        if not any(deb.name.startswith(stem) for stem in kept):
            deb.unlink()


def build(cache: Path | None = None, log=sys.stderr) -> Image:
    """The image for the host's current package versions, built if the cache lacks it.
    Raises Unavailable where apt-get or the mirror cannot be used. Safe to call from several
    processes at once (one builds, the others wait on the cache's lock)."""
    cache = cache or cache_root()
    chosen = resolve_packages(cache)
    key = image_key(chosen)
    directory = cache / key
    image = Image(directory, directory / "vmlinux", directory / "initramfs.cpio.gz", "")
    cache.mkdir(parents=True, exist_ok=True)
    with open(cache / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (directory / "manifest.txt").exists():
            print(f"guest_image: building {directory}", file=log)
            debs = download(chosen, cache / "debs")
            with tempfile.TemporaryDirectory(dir=cache, prefix="build-") as work:
                out = Path(work) / "image"
                out.mkdir()
                build_into(chosen, debs, out, Path(work))
                if directory.exists():
                    shutil.rmtree(directory)
                os.replace(out, directory)
        os.utime(directory / "manifest.txt")
        prune(cache)
    return Image(image.directory, image.kernel, image.initramfs, (directory / "manifest.txt").read_text())


def main() -> int:
    try:
        image = build()
    except Unavailable as e:
        print(f"guest_image: skipped: {e}", file=sys.stderr)
        return 77
    print(image.directory)
    return 0


if __name__ == "__main__":
    sys.exit(main())
