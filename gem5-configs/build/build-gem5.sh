#!/bin/sh
# Builds gem5.opt for one of cohtb's machines from a gem5 v24.0.0.1 source tree (docs/gem5.md says how to get
# one): build-gem5.sh SOURCE VARIANT [PATCH...], VARIANT X86 (MESI_Two_Level, the flat machine) or X86_CHI (CHI),
# then the project's patches the machine needs, by name (its machine file's gem5_patches, gem5-configs/multisocket/machines/; none: stock). Every
# build also gets the instruments (cohtb/run/gem5.py, INSTRUMENTS: pc-profile), which change nothing simulated.
# Niced: it takes every core for about 100 minutes on two. Ends with the binary's path and digest.
set -eu
src=${1:?usage: build-gem5.sh GEM5_SOURCE X86|X86_CHI [PATCH...]}
variant=${2:?usage: build-gem5.sh GEM5_SOURCE X86|X86_CHI [PATCH...]}
shift 2
here=$(cd "$(dirname "$0")" && pwd)
cd "$src"
case $variant in
X86) [ $# -eq 0 ] || { echo "build-gem5.sh: the flat machine (X86) has no machine patches; they are for X86_CHI machines (a machine file's gem5_patches)" >&2; exit 2; } ;;
X86_CHI)   # gem5's X86 options with the CHI protocol: X86_CHI.defconfig beside this script
    [ -f build/X86_CHI/gem5.build/config ] ||
        PATH="$here/bin:/usr/bin:/bin" scons defconfig build/X86_CHI "$here/X86_CHI.defconfig" --ignore-style
    ;;
*) echo "build-gem5.sh: variant $variant: want X86 or X86_CHI" >&2; exit 2 ;;
esac
# The patches named and the instruments (patches/<name>.patch, each documented in its header), each applied once,
# exactly (no fuzz): a tree that already has one (patch -R would apply) is left as it is. A tree holds one
# machine's build: a patch applied for another machine is not taken out (cohtb refuses the mismatch at launch).
for name in "$@" pc-profile; do
    p="$here/patches/$name.patch"
    [ -f "$p" ] || { echo "build-gem5.sh: patch $name: no $p" >&2; exit 2; }
    patch -p1 -R --dry-run -s -f --fuzz=0 < "$p" > /dev/null 2>&1 || patch -p1 -s -f --fuzz=0 < "$p"
done
# Our g++ (bin/g++: reproducible, no debug information), then Debian's python3-config and tools, whatever a
# virtual environment put on PATH.
PATH="$here/bin:/usr/bin:/bin" nice -n 19 scons "build/$variant/gem5.opt" -j"$(nproc)" --ignore-style \
    PYTHON_CONFIG=/usr/bin/python3-config
echo "$src/build/$variant/gem5.opt sha256 $(sha256sum "build/$variant/gem5.opt" | cut -c1-16)"
