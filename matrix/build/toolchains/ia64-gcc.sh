#!/bin/bash
# Build a C-only ia64-linux-gnu cross compiler from Debian's gcc-12-source.
#
# Debian ships binutils-ia64-linux-gnu but no ia64 gcc. This builds just
# enough of gcc (the compiler proper and libgcc, no libc) to compile a
# kernel and out-of-tree modules.
#
# usage: ia64-gcc.sh PREFIX
#   PREFIX  install folder; PREFIX/bin/ia64-linux-gnu-gcc is the result.
# The caller keys PREFIX by this script and the package versions and
# publishes it atomically; this script only builds.
set -euo pipefail

prefix=${1:?usage: ia64-gcc.sh PREFIX}
src_tar=/usr/src/gcc-12/gcc-12.2.0-dfsg.tar.xz
jobs=${JOBS:-$(nproc)}

for f in "$src_tar" /usr/bin/ia64-linux-gnu-as /usr/bin/ia64-linux-gnu-ld; do
	if [ ! -e "$f" ]; then
		echo "ia64-gcc: $f is missing;" \
		     "run: apt-get install gcc-12-source binutils-ia64-linux-gnu" \
		     "libgmp-dev libmpfr-dev libmpc-dev" >&2
		exit 1
	fi
done

work=$(mktemp -d "${TMPDIR:-/tmp}/ia64-gcc.XXXXXX")
trap 'rm -rf "$work"' EXIT

tar -C "$work" -xf "$src_tar"
srcdir=$(echo "$work"/gcc-12*)
mkdir "$work/build"
cd "$work/build"

"$srcdir/configure" \
	--prefix="$prefix" \
	--target=ia64-linux-gnu \
	--program-prefix=ia64-linux-gnu- \
	--with-as=/usr/bin/ia64-linux-gnu-as \
	--with-ld=/usr/bin/ia64-linux-gnu-ld \
	--enable-languages=c \
	--without-headers --with-newlib \
	--disable-shared --disable-threads --disable-multilib \
	--disable-bootstrap --disable-nls \
	--disable-libssp --disable-libquadmath --disable-libgomp \
	--disable-libatomic --disable-libitm --disable-libvtv \
	--disable-libsanitizer --disable-libstdcxx --disable-libcc1 \
	--disable-lto --disable-plugin

# The DFSG tarball strips the texinfo sources that s-tm-texi compares
# against; the stamp says the check is done.
mkdir -p gcc
touch gcc/s-tm-texi

make -j"$jobs" all-gcc all-target-libgcc
# genhooks was built after the stamp; renew it so install does not retry.
touch gcc/s-tm-texi
make install-gcc install-target-libgcc
test -x "$prefix/bin/ia64-linux-gnu-gcc"
