#!/bin/bash
# Boot kernel/patches/6.12 on linux-source-6.12 and run its nopfn-tests.
#
# A stopgap until the harness takes the tree as an axis (issue 24): the
# matrix builds and boots linux-source-6.1 only.  This builds the 6.12
# tree with the 6.12 series for one architecture the way the matrix
# configures its kernels (tinyconfig + kernel/config/common.config + the
# architecture file's fragment, W=1), cross-compiles the series' own
# selftest (tools/testing/selftests/mm/nopfn-tests) statically, packs it
# with the series' test module (lib/test_nopfn.ko) and the matrix's busybox
# into an initramfs, and boots it under QEMU with the architecture file's
# machine, CPU, memory and command line.  It prints the KTAP totals and
# exits non-zero unless every case passed or skipped with a reason.
#
# Usage: tests/trees/smoke-6.12.sh ARCH (booted so far: x86_64, arm64,
# riscv64)
# Needs: apt-get install linux-source-6.12 (the tarball in /usr/src), the
# packages matrix/setup installs, and a matrix run of the same
# architecture before (its busybox, from ~/.cache/nopfn-matrix/busybox).
# Work folder: $NOPFN_612_WORK (default /tmp/nopfn-6.12).
set -euo pipefail
A=${1:?usage: $0 ARCH (an architecture file: x86_64, arm64, riscv64 were booted)}
REPO=$(cd "$(dirname "$0")/../.." && pwd)
WORK=${NOPFN_612_WORK:-/tmp/nopfn-6.12}
TARBALL=/usr/src/linux-source-6.12.tar.xz
CACHE=${NOPFN_CACHE:-$HOME/.cache/nopfn-matrix}
# the architecture file, through the harness's own parser
vars=$(cd "$REPO" && /usr/bin/python3 - "$A" <<'PY'
import shlex, sys
from matrix.spec import arch
arches = arch.load_all()
if sys.argv[1] not in arches:
    sys.exit(f"unknown architecture {sys.argv[1]}: one of {' '.join(arches)}")
a = arches[sys.argv[1]]
q = a.qemu
for name, value in {
        "KA": a.kernel.arch, "CROSS": a.kernel.cross_compile or "",
        "IMG": a.kernel.image, "CC": a.user.cc,
        "FRAGMENT": a.kernel.config,
        "QEMU": f"{q.binary} -M {q.machine} -cpu {q.cpu} -smp {q.smp} "
                f"-m {q.memory} {q.extra_args}",
        "APPEND": f"console={q.console} {q.cmdline}",
        "PARAMS": a.module_params.get("test_nopfn", "")}.items():
    print(f"{name}={shlex.quote(value)}")
PY
) || exit 2
eval "$vars"
# What 6.12 needs beside the architecture file (the tree axis will carry
# these as the file's per-tree overrides): riscv64's QEMU virt platform is
# ARCH_VIRT (6.1: SOC_VIRT), and 6.12 reads QEMU 7.2's device tree
# ("riscv,isa", not "riscv,isa-base") only with RISCV_ISA_FALLBACK, which
# tinyconfig turns off.
TREE_FRAGMENT=
[ "$A" = riscv64 ] && TREE_FRAGMENT="CONFIG_ARCH_VIRT=y
CONFIG_RISCV_ISA_FALLBACK=y"
[ -f "$TARBALL" ] || { echo "$0: no $TARBALL: apt-get install linux-source-6.12" >&2; exit 2; }
BB=$(ls "$CACHE"/busybox/"$A"-*/busybox 2>/dev/null | head -1)
[ -n "$BB" ] || { echo "$0: no busybox for $A in $CACHE: ./matrix/run --arch $A first" >&2; exit 2; }

SRC=$WORK/src
if [ ! -f "$SRC/.series-applied" ]; then
  rm -rf "$SRC" && mkdir -p "$WORK"
  tar -C "$WORK" -xf "$TARBALL" && mv "$WORK/linux-source-6.12" "$SRC"
  while read -r p; do
    patch -d "$SRC" -p1 -F0 -s < "$REPO/kernel/patches/6.12/$p"
  done < <(grep -v '^#' "$REPO/kernel/patches/6.12/series")
  touch "$SRC/.series-applied"
fi

O=$WORK/build-$A
OUT=$WORK/boot-$A
mkdir -p "$O" "$OUT"
M="make -s -C $SRC O=$O ARCH=$KA CROSS_COMPILE=$CROSS"
if [ ! -f "$O/.config" ]; then
  $M tinyconfig
  { grep -v '^#' "$REPO/kernel/config/common.config"
    echo "$FRAGMENT"
    echo "$TREE_FRAGMENT"; } > "$OUT/fragment"
  "$SRC/scripts/kconfig/merge_config.sh" -m -O "$O" "$O/.config" "$OUT/fragment" >/dev/null
  $M olddefconfig
fi
for s in PER_VMA_LOCK TEST_NOPFN; do
  grep -q "^CONFIG_$s=" "$O/.config" || echo "note: CONFIG_$s is not set"
done
start=$(date +%s)
$M -j"$(nproc)" W=1 > "$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
echo "kernel build: $(( $(date +%s) - start )) s"
# W=1 reports in the files the series touches (none expected)
sed -n 's|^+++ b/||p' "$REPO"/kernel/patches/6.12/0*.patch | sort -u |
  sed "s|^|$SRC/|; s|\$|:|" > "$OUT/series-files"
if grep -F -f "$OUT/series-files" "$OUT/build.log" | grep "warning:"; then
  echo "W=1 warnings in the series' files"; exit 1
fi
$CC -Wall -O2 -I "$SRC" -I "$SRC/tools/testing/selftests" -static \
  -o "$OUT/nopfn-tests" "$SRC/tools/testing/selftests/mm/nopfn-tests.c" -lpthread -lrt -lm

R=$OUT/root
rm -rf "$R" && mkdir -p "$R"/{bin,proc,sys,dev,tmp}
cp "$BB" "$R/bin/busybox"
cp "$OUT/nopfn-tests" "$O/lib/test_nopfn.ko" "$R/"
cat > "$R/init" <<INIT
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
mount -t debugfs debugfs /sys/kernel/debug; mount -t tmpfs tmp /tmp
echo "uname: \$(uname -r)"
insmod /test_nopfn.ko $PARAMS
cd /tmp
TEST_NOPFN_MODULE=/test_nopfn.ko NOPFN_ODIRECT=/dev/ram0 /nopfn-tests
echo "nopfn-tests exit: \$?"
reboot -f
INIT
chmod +x "$R/init"
(cd "$R" && find . | cpio -o -H newc 2>/dev/null | gzip > "$OUT/initramfs.gz")
timeout 900 $QEMU -nographic -no-reboot -kernel "$O/$IMG" \
  -initrd "$OUT/initramfs.gz" -append "$APPEND panic=-1" \
  > "$OUT/console.log" 2>&1 || echo "qemu: exit $? (timeout 900 s?)"
tr -d '\r' < "$OUT/console.log" > "$OUT/console.txt"
grep -aE "^# Totals|^not ok|nopfn-tests exit|uname:|the fault held" "$OUT/console.txt" || true
echo "console: $OUT/console.txt"
grep -aq "^nopfn-tests exit: 0$" "$OUT/console.txt"
